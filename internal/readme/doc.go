// Package readme holds the test that keeps the repository's README honest: every flag each
// command accepts must be named in it, so a flag cannot be added without telling users.
package readme
