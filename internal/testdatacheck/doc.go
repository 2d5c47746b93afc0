// Package testdatacheck holds the checks on the module's data-driven test files that their
// runner (github.com/cockroachdb/datadriven) does not make itself.
package testdatacheck
