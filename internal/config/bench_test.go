package config

import (
	"io"
	"strings"
	"testing"
)

// fullFile writes a courier.toml with every setting and a policy table.
func fullFile(b *testing.B) string {
	var file strings.Builder
	c := Defaults()
	if err := c.Set("keep_env", "AWS_PROFILE,GH_*", "bench"); err != nil {
		b.Fatal(err)
	}
	if err := c.Set("policy.deny", "curl,wget,ssh", "bench"); err != nil {
		b.Fatal(err)
	}
	if err := c.Print(&file); err != nil {
		b.Fatal(err)
	}
	return writeFile(b, file.String())
}

// BenchmarkLoadFile measures what every courier command pays: reading a
// full courier.toml.
func BenchmarkLoadFile(b *testing.B) {
	path := fullFile(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Defaults().LoadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrint measures courier config after loading a full file: each
// line shown from the file costs a parse to find its line.
func BenchmarkPrint(b *testing.B) {
	c := Defaults()
	if err := c.LoadFile(fullFile(b)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Print(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
