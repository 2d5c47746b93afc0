// Package readme holds the tests that keep the repository's documents honest: the flag
// reference, docs/flags.md, is every command's --help as the binaries print it (a flag
// cannot be added or reworded without the reference following), and the README's links
// into docs/ resolve.
package readme
