package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// The files the parser is slow on are refused before it reads them: the
// error comes from the shape check (the parser never saw the file, so it
// is not a toml.ParseError), names the file, the line and the bound, and
// changes nothing.
func TestLoadFileRefusesHugeShapes(t *testing.T) {
	deep := func(open, close string, n int) string {
		return "x = " + strings.Repeat(open, n) + strings.Repeat(close, n) + "\n"
	}
	tests := []struct {
		name, content, want string
	}{
		{"20,000-part dotted key", strings.Repeat("a.", 19999) + "a = 1\n",
			"courier.toml:1: a key of more than 8 dotted parts; a settings file may have at most 8 dotted parts per key, 16 levels of nesting, 1000 keys and 10000 items in lists"},
		{"20,000-part table name", "copy = true\n[" + strings.Repeat("t.", 19999) + "t]\n", "courier.toml:2: a key of more than 8 dotted parts"},
		{"dotted keys in an inline table", "policy = { " + strings.Repeat("a.", 50) + "b = 1 }\n", "courier.toml:1: a key of more than 8 dotted parts"},
		{"deeply nested arrays", deep("[", "]", 5000), "courier.toml:1: values nested more than 16 deep"},
		{"deeply nested inline tables", "x = " + strings.Repeat("{a = ", 100) + "1" + strings.Repeat("}", 100) + "\n", "courier.toml:1: values nested more than 16 deep"},
		{"too many keys", manyKeys(1001), "courier.toml:1001: more than 1000 keys"},
		{"a huge list", "keep_env = [" + strings.Repeat("\"A\", ", 200000) + "\"B\"]\n", "courier.toml:1: more than 10000 items in lists"},
		{"too many tables", strings.Repeat("[t]\n", 1001), "courier.toml:1001: more than 1000 keys"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.content)
			c := Defaults()
			err := c.LoadFile(path)
			if got := relative(path, errText(err)); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("LoadFile = %s\nwant %s...", got, tc.want)
			}
			if strings.Contains(errText(err), "\n") {
				t.Errorf("the error is not one line: %q", errText(err))
			}
			var pe toml.ParseError
			if errors.As(err, &pe) {
				t.Errorf("the TOML parser read the file: %v", err)
			}
			if !equalConfig(*c, *Defaults()) {
				t.Error("a refused file changed the settings")
			}
		})
	}
}

func TestLoadFileRefusesAHugeFile(t *testing.T) {
	path := writeFile(t, "# padding\n"+strings.Repeat("#"+strings.Repeat("x", 1023)+"\n", 1024))
	err := Defaults().LoadFile(path)
	if got := relative(path, errText(err)); got != "courier.toml is larger than 1 MB, the most a settings file may be" {
		t.Errorf("LoadFile = %s", got)
	}
}

// What ordinary files hold stays readable: every setting as courier
// config prints them, dots and brackets inside strings and comments, floats and long lists in values, quoted keys.
func TestCheckShapeAcceptsOrdinaryFiles(t *testing.T) {
	var printed strings.Builder
	c := Defaults()
	if err := c.Set("policy.deny", "curl,wget,ssh", "test"); err != nil {
		t.Fatal(err)
	}
	if err := c.Print(&printed); err != nil {
		t.Fatal(err)
	}
	files := []string{
		printed.String(),
		"# a.b.c.d.e.f.g.h.i.j.k [[[[[[[[[[[[[[[[[[\ncopy = true\n",
		`keep_env = ["A.B.C.D.E.F.G.H.I.J", "[[[[[[[[[[[[[[[[[[[[", '{{{{{{{{{{{{{{{{{'] ` + "\n",
		"x = [" + strings.Repeat("1.5, ", 9000) + "2.5]\n",
		"x = [\n" + strings.Repeat("  \"a.b.c.d.e.f.g.h.i.j\",\n", 900) + "]\n",
		`"a.b.c.d.e.f.g.h.i.j" = 1` + "\n",
		"a = \"\"\"\n[x.y.z.a.b.c.d.e.f.g]\n\"\"\"\nb = 2\n",
		"a = '''\n" + strings.Repeat("k = 1\n", 2000) + "'''\n",
		"p = { a = 1, b = { c = [1, 2, { d = 3 }] } }\n",
		manyKeys(1000),
	}
	for i, f := range files {
		if err := checkShape("courier.toml", f); err != nil {
			t.Errorf("file %d: %v", i, err)
		}
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	return b.String()
}
