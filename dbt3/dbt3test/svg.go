package dbt3test

import (
	"bytes"
	"encoding/xml"
	"io"
	"testing"
)

// WellFormedSVG fails t unless data (named name in messages) is one well-formed XML
// document with an <svg> root: what the reports' plots must be.
func WellFormedSVG(t testing.TB, name string, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q, want svg", name, root)
	}
}
