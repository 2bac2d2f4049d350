package edit

import "testing"

func TestHasElision(t *testing.T) {
	tests := []struct {
		name string
		body string
		line int // 0: none expected
		text string
	}{
		{"rest of the code unchanged", "a := 1\n... rest of the code unchanged\n", 2, "... rest of the code unchanged"},
		{"existing code here", "func f() {\n\t// existing code here\n}\n", 2, "\t// existing code here"},
		{"python unchanged", "def f():\n    # ... (unchanged)\n", 2, "    # ... (unchanged)"},
		{"block comment remains the same", "/* ... */ remains the same\n", 1, "/* ... */ remains the same"},
		{"html rest of file", "<div>\n<!-- rest of file -->\n", 2, "<!-- rest of file -->"},
		{"bracketed existing code", "x\r\n[... existing code ...]\r\n", 2, "[... existing code ...]"},
		{"dots-only comment", "class A {\n  // ...\n}\n", 2, "  // ..."},
		{"unicode ellipsis comment", "# …\n", 1, "# …"},
		{"jsx comment", "<App>\n  {/* ... existing JSX ... */}\n", 2, "  {/* ... existing JSX ... */}"},
		{"sql comment", "SELECT 1;\n-- rest of the query unchanged\n", 2, "-- rest of the query unchanged"},
		{"omitted for brevity", "// other methods omitted for brevity\n", 1, "// other methods omitted for brevity"},
		{"same as before", "    // ... same as before ...\n", 1, "    // ... same as before ..."},
		{"keep existing", "# keep the rest as is\n", 1, "# keep the rest as is"},
		{"first of several", "// ...\n// rest of file\n", 1, "// ..."},

		{"python ellipsis body is code", "class P(Protocol):\n    def f(self) -> int: ...\n    ...\n", 0, ""},
		{"spread and variadic", "f(...args)\ng(xs...)\n", 0, ""},
		{"short comment about existing code", "// Reuse existing code paths\n", 0, ""},
		{"comment saying something stays unchanged", "// This function keeps the rest unchanged\n", 0, ""},
		{"long comment mentioning existing code", "// This works around existing code in the old parser, which assumed that every input was ASCII.\n", 0, ""},
		{"command-line flag", "diff --unchanged-line-format='' a b\n  --unchanged-group-format=x\n", 0, ""},
		{"dict key", "opts = {\n    'unchanged': 0,\n}\n", 0, ""},
		{"ordinary comments", "// Parse the rest of args.\n# TODO: handle errors\n/* license */\n", 0, ""},
		{"prose with dots", "Wait...\nand then...\n", 0, ""},
		{"empty body", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, text, found := HasElision(tt.body)
			if found != (tt.line != 0) || line != tt.line || text != tt.text {
				t.Errorf("HasElision = %d, %q, %v; want %d, %q", line, text, found, tt.line, tt.text)
			}
		})
	}
}
