// Command version prints its build, for TestStampedBinary.
package main

import (
	"fmt"

	"github.com/colinkdb/colink/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Read().Line("version")) }
