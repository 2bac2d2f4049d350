package agentspaces

// The conformance suite: every example of the protocol's three documents,
// and every validation rule at its boundary, as one file each in
// testdata/conformance (txtar). A case's comment holds "key: value" lines:
//
//	source:  where the example comes from
//	engine:  yes when the expected events need courier's engine (files,
//	         shell, policy); no when decoding and validation decide them
//	mode:    ops (default: operations.json is a program's message),
//	         reply (reply.txt is a chat reply) or shape (event.json is one
//	         event that must encode back unchanged)
//	policy:  the preset the run uses (default standard)
//	expand:  yes when sections use {{repeat `a` 255}}, {{zeros64 N}} (the
//	         base64 of N zero bytes) or {{base64 `...`}} (decoded bytes)
//	final:   yes when, in the copy-paste loop, the reply ends the session
//	session, sequence: the routing a reply copies from its request
//
// and then notes on where courier differs from the document, and why. The
// sections:
//
//	operations.json | reply.txt  the input
//	events.json                  the expected events message
//	approval.json, resumed.json  the answer to the pause, and the events
//	                             of the resumed run
//	turnN/operations.json | turnN/reply.txt, turnN/events.json
//	                             the later turns of a multi-turn case
//	                             (N from 2), each a run of its own on the
//	                             workspace the turn before left; "final"
//	                             then speaks of the last turn, and no
//	                             earlier one may end the session
//	files/PATH                   the workspace before the run
//	want/PATH                    files after the run, exactly
//	gone/PATH                    files that must not exist after the run
//	bin/NAME                     programs on the shell's PATH (stand-ins
//	                             for tools the documents use, like bun)
//	symlinks                     "name -> $OUTSIDE" lines: links made in
//	                             the workspace to a folder outside it
//
// A files/ or want/ section is the file's content plus one line break.
// Events are compared field by field after normalising what differs from
// run to run: a timestamp must be ISO 8601, durationMs a non-negative
// integer, runId any string; "operationId": null is no operationId; an
// expected "<any>" string matches any non-empty string (courier's own
// explanations of failures the documents do not word).
//
// runConformance drives a case through a caseRunner and checks
// everything. runWithoutEngine carries out what needs no engine (messages,
// validation errors, unreadable messages); runWithEngine (in
// conformance_engine_test.go) carries out the rest with courier's runner
// and engine, as 'courier ops' does, answering pauses with approval.json.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/courier-agent/courier/internal/command"
	"github.com/rogpeppe/go-internal/txtar"
)

// conformanceCase is one file of testdata/conformance.
type conformanceCase struct {
	name     string
	header   map[string]string
	sections map[string][]byte
}

func (c *conformanceCase) mode() string {
	if m := c.header["mode"]; m != "" {
		return m
	}
	return "ops"
}

func (c *conformanceCase) needsEngine() bool { return c.header["engine"] == "yes" }

// policy is the preset the case's run uses.
func (c *conformanceCase) policy() string {
	if p := c.header["policy"]; p != "" {
		return p
	}
	return PresetStandard
}

// input is the operations message or the chat reply.
func (c *conformanceCase) input() []byte { return c.turns()[0].input }

// caseTurn is one operations -> events cycle of a case.
type caseTurn struct {
	name   string // the section of its expected events
	input  []byte
	events []byte
}

// turns are the case's turns in order: the first, from operations.json
// or reply.txt, then turn2/, turn3/ and so on.
func (c *conformanceCase) turns() []caseTurn {
	in := "operations.json"
	if c.mode() == "reply" {
		in = "reply.txt"
	}
	turns := []caseTurn{{name: "events.json", input: c.sections[in], events: c.sections["events.json"]}}
	for n := 2; ; n++ {
		dir := fmt.Sprintf("turn%d/", n)
		data, ok := c.sections[dir+in]
		if !ok {
			return turns
		}
		turns = append(turns, caseTurn{name: dir + "events.json", input: data, events: c.sections[dir+"events.json"]})
	}
}

// under returns the sections under dir ("files/", "want/", "bin/"), by
// the rest of their names.
func (c *conformanceCase) under(dir string) map[string][]byte {
	out := map[string][]byte{}
	for name, data := range c.sections {
		if rest, ok := strings.CutPrefix(name, dir); ok {
			out[rest] = data
		}
	}
	return out
}

func loadConformance(t *testing.T) []*conformanceCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/conformance/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no conformance cases: %v", err)
	}
	var cases []*conformanceCase
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := &conformanceCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), header: map[string]string{}, sections: map[string][]byte{}}
		for _, line := range strings.Split(string(ar.Comment), "\n") {
			if line == "" {
				break
			}
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("%s: header line %q is not key: value", p, line)
			}
			c.header[k] = v
		}
		if c.header["source"] == "" {
			t.Fatalf("%s names no source", p)
		}
		for _, f := range ar.Files {
			data := f.Data
			if c.header["expand"] == "yes" {
				data = expand(t, p+":"+f.Name, data)
			}
			if strings.HasPrefix(f.Name, "files/") || strings.HasPrefix(f.Name, "want/") {
				data = bytes.TrimSuffix(data, []byte("\n"))
			}
			c.sections[f.Name] = data
		}
		cases = append(cases, c)
	}
	return cases
}

// expand fills in the generators of large or binary inputs.
func expand(t *testing.T, name string, data []byte) []byte {
	tmpl, err := template.New(name).Funcs(template.FuncMap{
		"repeat":  strings.Repeat,
		"zeros64": func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) },
		"base64": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			return string(b), err
		},
	}).Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// conformanceEnv is where a case runs: its workspace, a folder outside
// it, and the folder of its bin/ programs.
type conformanceEnv struct {
	workspace, outside, bin string
}

// caseResult is what a case came to: the events message of each turn,
// and for a case with an approval, the resumed first run's.
type caseResult struct {
	turns   []EventsMessage
	resumed *EventsMessage
}

// caseRunner carries out a case's turns in order.
type caseRunner func(t *testing.T, c *conformanceCase, env conformanceEnv) caseResult

// runConformance sets up each case, runs it, and checks the events and
// the workspace.
func runConformance(t *testing.T, cases []*conformanceCase, run caseRunner) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := setUp(t, c)
			got := run(t, c, env)
			turns := c.turns()
			if len(got.turns) != len(turns) {
				t.Fatalf("%d turns carried out, want %d", len(got.turns), len(turns))
			}
			for i, turn := range turns {
				compareEvents(t, turn.name, turn.events, got.turns[i])
			}
			if want, ok := c.sections["resumed.json"]; ok {
				if got.resumed == nil {
					t.Fatal("the run was not resumed")
				}
				compareEvents(t, "resumed.json", want, *got.resumed)
			}
			checkWorkspace(t, c, env)
		})
	}
}

func setUp(t *testing.T, c *conformanceCase) conformanceEnv {
	env := conformanceEnv{workspace: t.TempDir(), outside: t.TempDir(), bin: t.TempDir()}
	for name, data := range c.under("files/") {
		writeFile(t, filepath.Join(env.workspace, name), data, 0o644)
	}
	for name, data := range c.under("bin/") {
		writeFile(t, filepath.Join(env.bin, name), data, 0o755)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(c.sections["symlinks"])), "\n") {
		if name, target, ok := strings.Cut(line, " -> "); ok {
			target = strings.ReplaceAll(target, "$OUTSIDE", env.outside)
			if err := os.Symlink(target, filepath.Join(env.workspace, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return env
}

func writeFile(t *testing.T, p string, data []byte, mode os.FileMode) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
}

// checkWorkspace checks want/ files and that gone/ files, and anything
// in the folder outside, do not exist.
func checkWorkspace(t *testing.T, c *conformanceCase, env conformanceEnv) {
	for name, want := range c.under("want/") {
		got, err := os.ReadFile(filepath.Join(env.workspace, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("workspace file %s: %v\n got %.200q\nwant %.200q", name, err, got, want)
		}
	}
	for name := range c.under("gone/") {
		if _, err := os.Lstat(filepath.Join(env.workspace, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after the run (%v)", name, err)
		}
	}
	if left, _ := os.ReadDir(env.outside); len(left) > 0 {
		t.Errorf("the run wrote outside the workspace: %v", left)
	}
}

// runWithoutEngine carries out what needs no engine: a message's result is
// OK and a malformed operation's is its validation error.
func runWithoutEngine(t *testing.T, c *conformanceCase, _ conformanceEnv) caseResult {
	var res caseResult
	for _, turn := range c.turns() {
		cmds, err := parseInput(c, turn.input)
		o := Outcome{Commands: cmds, Err: err}
		for _, cmd := range cmds {
			switch cmd.Type {
			case command.Message, command.Done:
				o.Results = append(o.Results, command.Result{Type: cmd.Type, Status: command.OK})
			case command.ParseError:
				o.Results = append(o.Results, command.Result{Type: cmd.Type, Status: command.Failed, Summary: cmd.Error})
			default:
				t.Fatalf("case %s is marked engine: no but has a %s", c.name, cmd.Type)
			}
		}
		res.turns = append(res.turns, Events("run_conformance", o, time.Now()))
	}
	return res
}

// parseInput reads one turn's input as the case's mode says.
func parseInput(c *conformanceCase, input []byte) ([]command.Command, error) {
	if c.mode() == "reply" {
		return ParseReply(string(input)).Commands, nil
	}
	return Decode(input)
}

// TestConformance loads the cases once (some are tens of megabytes) and
// checks them.
func TestConformance(t *testing.T) {
	cases := loadConformance(t)
	t.Run("WithoutEngine", func(t *testing.T) { conformanceWithoutEngine(t, cases) })
	t.Run("Shapes", func(t *testing.T) { conformanceShapes(t, cases) })
	t.Run("Mapping", func(t *testing.T) { conformanceMapping(t, cases) })
}

// The cases that need no engine, run completely.
func conformanceWithoutEngine(t *testing.T, all []*conformanceCase) {
	var cases []*conformanceCase
	for _, c := range all {
		if !c.needsEngine() && c.mode() != "shape" {
			cases = append(cases, c)
		}
	}
	if len(cases) < 15 {
		t.Fatalf("only %d cases run without the engine", len(cases))
	}
	runConformance(t, cases, runWithoutEngine)
}

// Every expected event, and every shape example, is in the protocol's
// exact shape: decoding it into Event and encoding it gives it back.
func conformanceShapes(t *testing.T, cases []*conformanceCase) {
	for _, c := range cases {
		if data, ok := c.sections["approval.json"]; ok {
			if _, err := DecodeApproval(data); err != nil {
				t.Errorf("%s approval.json: %v", c.name, err)
			}
		}
		if c.mode() == "ops" {
			operationShapes(t, c)
		}
		secs := []string{"resumed.json", "event.json"}
		for _, turn := range c.turns() {
			secs = append(secs, turn.name)
		}
		for _, sec := range secs {
			data, ok := c.sections[sec]
			if !ok {
				continue
			}
			var raws []json.RawMessage
			if sec == "event.json" {
				raws = []json.RawMessage{data}
			} else {
				var m struct{ Events []json.RawMessage }
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatalf("%s %s: %v", c.name, sec, err)
				}
				raws = m.Events
			}
			for i, raw := range raws {
				var e Event
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatalf("%s %s event %d: %v", c.name, sec, i, err)
				}
				back, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				want, got := decodeAny(t, raw), decodeAny(t, back)
				dropNullIDs(want)
				sameTime(want)
				sameTime(got)
				if !reflect.DeepEqual(want, got) {
					t.Errorf("%s %s event %d does not encode back:\nwant %s\n got %s", c.name, sec, i, raw, back)
				}
			}
		}
	}
}

// operationShapes checks that every valid operation of a program's
// message, mapped onto a command, encodes back to what was sent.
func operationShapes(t *testing.T, c *conformanceCase) {
	for _, turn := range c.turns() {
		turnShapes(t, c, turn.input)
	}
}

func turnShapes(t *testing.T, c *conformanceCase, input []byte) {
	var m struct{ Operations []json.RawMessage }
	if json.Unmarshal(input, &m) != nil {
		return // an unreadable message; its own case checks the error
	}
	for i, raw := range m.Operations {
		var f fields
		if json.Unmarshal(raw, &f) != nil {
			continue
		}
		typ, cmd, err := validate(rawOp{fields: f})
		if err != nil {
			continue
		}
		back, err := json.Marshal(operationOf(typ, cmd))
		if err != nil {
			t.Fatal(err)
		}
		// The command keeps what the operation means: an absent
		// "overwrite" is false, an absent "encoding" is text.
		want := decodeAny(t, raw).(map[string]any)
		if _, ok := want["overwrite"]; typ == OpCreateFile && !ok {
			want["overwrite"] = false
		}
		if want["encoding"] == string(UTF8) {
			delete(want, "encoding")
		}
		if got := decodeAny(t, back); !reflect.DeepEqual(want, got) {
			t.Errorf("%s operation %d does not encode back:\nwant %s\n got %s", c.name, i+1, raw, back)
		}
	}
}

// The cases that need the engine, checked as far as decoding and mapping
// go: each expected event belongs to an operation of the right type and
// id, the validation errors are exact, and the run pauses where the case
// says.
func conformanceMapping(t *testing.T, cases []*conformanceCase) {
	for _, c := range cases {
		if c.mode() == "shape" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			checkFinal(t, c)
			if !c.needsEngine() {
				return
			}
			for _, turn := range c.turns() {
				checkTurnMapped(t, c, turn)
			}
		})
	}
}

// checkTurnMapped checks that every expected event of a turn can come
// from the operation in its place.
func checkTurnMapped(t *testing.T, c *conformanceCase, turn caseTurn) {
	cmds, err := parseInput(c, turn.input)
	if err != nil {
		t.Fatalf("%s: the input does not decode: %v", turn.name, err)
	}
	var want EventsMessage
	if err := json.Unmarshal(turn.events, &want); err != nil {
		t.Fatalf("%s: %v", turn.name, err)
	}
	n := len(cmds)
	if want.Status == StatusAwaitingApproval {
		n = len(want.Events)
		if _, ok := c.sections["approval.json"]; ok {
			if _, err := DecodeApproval(c.sections["approval.json"]); err != nil {
				t.Errorf("approval.json: %v", err)
			}
		}
	}
	if len(want.Events) != n || n > len(cmds) {
		t.Fatalf("%s: %d expected events for %d operations (status %s)", turn.name, len(want.Events), len(cmds), want.Status)
	}
	for i, e := range want.Events {
		checkMapped(t, i, cmds[i], e)
	}
}

// checkMapped checks that command c can give the expected event e.
func checkMapped(t *testing.T, i int, c command.Command, e Event) {
	t.Helper()
	if c.Type == command.ParseError || c.Type == command.Message || c.Type == command.Done {
		res := command.Result{Status: command.OK}
		if c.Type == command.ParseError {
			res = command.Result{Status: command.Failed, Summary: c.Error}
		}
		got := ResultEvent(c, res, e.Timestamp)
		if a, b := mustJSON(t, got), mustJSON(t, e); a != b {
			t.Errorf("event %d:\n got %s\nwant %s", i, a, b)
		}
		return
	}
	typ := OpType(e.Type)
	if e.Type == EventPolicyDenied || e.Type == EventApprovalRequired {
		typ = e.OperationType
	}
	if opTypeOf(c.Type) != typ {
		t.Errorf("event %d is for a %s operation; the operation is %s (%s)", i, typ, opTypeOf(c.Type), c.Type)
	}
	id := c.ID
	if e.Type == EventApprovalRequired {
		id = ApprovalID(c, i)
	}
	if e.OperationID != id {
		t.Errorf("event %d has operationId %q; the operation's is %q", i, e.OperationID, id)
	}
	if e.Path != "" && e.Path != c.Path {
		t.Errorf("event %d names path %q; the operation's is %q", i, e.Path, c.Path)
	}
	if e.Command != "" && e.Command != c.Command {
		t.Errorf("event %d names command %q; the operation's is %q", i, e.Command, c.Command)
	}
	if e.Type == EventCreateFile && e.Success && e.BytesWritten != contentSize(c.Content, c.Encoding) {
		t.Errorf("event %d says %d bytes written; the operation has %d", i, e.BytesWritten, contentSize(c.Content, c.Encoding))
	}
	if e.Type == EventEditFile && e.Success && e.EditsApplied != len(c.Edits) {
		t.Errorf("event %d says %d edits applied; the operation has %d", i, e.EditsApplied, len(c.Edits))
	}
}

// checkFinal checks which replies end a session in the copy-paste loop,
// and a reply's routing.
func checkFinal(t *testing.T, c *conformanceCase) {
	turns := c.turns()
	for i, turn := range turns {
		cmds := ParseReply(string(turn.input)).Commands
		final := len(cmds) > 0 && cmds[len(cmds)-1].Type == command.Done
		if want := i == len(turns)-1 && c.header["final"] == "yes"; final != want {
			t.Errorf("%s: as a chat reply, it ends the session: %v, want %v", turn.name, final, want)
		}
	}
	r := ParseReply(string(c.input()))
	if s := c.header["session"]; s != "" && (r.Session != s || fmt.Sprint(r.Sequence) != c.header["sequence"]) {
		t.Errorf("routing %q %d, want %q %s", r.Session, r.Sequence, s, c.header["sequence"])
	}
}

// compareEvents compares an events message with the expected one, field
// by field after normalising.
func compareEvents(t *testing.T, name string, want []byte, got EventsMessage) {
	t.Helper()
	w := decodeAny(t, want)
	g := decodeAny(t, []byte(mustJSON(t, got)))
	normalise(w)
	normalise(g)
	if diffs := compareValues("", w, g, nil); len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%s differs:\n  %s\ngot:\n%s", name, strings.Join(diffs, "\n  "), mustJSON(t, got))
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeAny(t *testing.T, data []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v in %.200s", err, data)
	}
	return v
}

// normalise replaces what differs from run to run with placeholders, in
// place, when it has the right form.
func normalise(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "timestamp":
				if s, ok := x.(string); ok {
					if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
						v[k] = "<timestamp>"
					}
				}
			case "durationMs":
				if n, ok := x.(json.Number); ok {
					if i, err := n.Int64(); err == nil && i >= 0 {
						v[k] = "<duration>"
					}
				}
			case "runId":
				if _, ok := x.(string); ok {
					v[k] = "<runId>"
				}
			default:
				normalise(x)
			}
		}
		dropNullIDs(v)
	case []any:
		for _, x := range v {
			normalise(x)
		}
	}
}

// sameTime writes an event's timestamp in one form, so that
// "2025-01-15T10:30:00Z" and "2025-01-15T10:30:00.000Z" compare equal.
func sameTime(v any) {
	if m, ok := v.(map[string]any); ok {
		if s, ok := m["timestamp"].(string); ok {
			if at, err := time.Parse(time.RFC3339Nano, s); err == nil {
				m["timestamp"] = at.UTC().Format(time.RFC3339Nano)
			}
		}
	}
}

func dropNullIDs(v any) {
	if m, ok := v.(map[string]any); ok {
		if id, ok := m["operationId"]; ok && id == nil {
			delete(m, "operationId")
		}
	}
}

// compareValues lists the differences between want and got by path.
func compareValues(path string, want, got any, diffs []string) []string {
	if s, ok := want.(string); ok && s == "<any>" {
		if g, ok := got.(string); !ok || g == "" {
			diffs = append(diffs, fmt.Sprintf("%s: want a non-empty string, got %v", path, got))
		}
		return diffs
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return append(diffs, fmt.Sprintf("%s: want an object, got %v", path, got))
		}
		for k := range w {
			if _, ok := g[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing", path, k))
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: not expected (%.80v)", path, k, g[k]))
				continue
			}
			diffs = compareValues(path+"."+k, w[k], g[k], diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return append(diffs, fmt.Sprintf("%s: want %d items, got %.200v", path, len(w), got))
		}
		for i := range w {
			diffs = compareValues(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], diffs)
		}
	default:
		if !reflect.DeepEqual(want, got) {
			diffs = append(diffs, fmt.Sprintf("%s: want %.120v, got %.120v", path, want, got))
		}
	}
	return diffs
}
