// Package command defines courier's internal command model: the one shape
// that every front end (the tag protocol today, JSON operations later) maps a
// reply onto, and that the engine carries out and reports on.
package command

import (
	"fmt"
	"time"
)

// Type names a kind of command. The values are the tag names of the
// CodingAgent protocol, so they read naturally in results and JSON output.
type Type string

// The command types courier understands.
const (
	CreateFile Type = "CREATE_FILE"
	EditFile   Type = "EDIT_FILE"
	DeleteFile Type = "DELETE_FILE"
	ReadFile   Type = "READ_FILE"
	RunCommand Type = "RUN_COMMAND"
	Message    Type = "MESSAGE"
	Done       Type = "DONE"
	// ParseError stands for a block the parser could not understand; it
	// carries the explanation that goes back to the LLM.
	ParseError Type = "PARSE_ERROR"
)

// Types lists the commands an LLM may send, in the protocol's order.
var Types = []Type{CreateFile, EditFile, DeleteFile, ReadFile, RunCommand, Message, Done}

// Edit is one search/replace pair of an EDIT_FILE command.
type Edit struct {
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// Base64 is the Encoding of content carried as standard base64 text (with
// padding), so that any bytes survive JSON journals unchanged.
const Base64 = "base64"

// Command is one instruction from a reply. Which fields apply depends on
// Type:
//   - CREATE_FILE: Path, Content, NoOverwrite, Encoding
//   - EDIT_FILE: Path and either StartLine/EndLine with Content (line range)
//     or Edits (search/replace), and Literal
//   - DELETE_FILE: Path
//   - READ_FILE: Path (a file or a glob), optionally StartLine/EndLine; or,
//     with Inline, one file named literally, and Encoding
//   - RUN_COMMAND: Command, optionally Dir, Timeout, Env, SplitOutput
//   - MESSAGE, DONE: Text
//   - PARSE_ERROR: Error, and Path when the broken block named one
//
// The tag protocol leaves Literal, Encoding, SplitOutput and Inline unset;
// the Agent Spaces JSON protocol sets them to ask for its semantics.
type Command struct {
	Type Type `json:"type"`
	// ID correlates a command with its result (JSON front ends set it).
	ID string `json:"id,omitempty"`
	// Line is the 1-based line of the reply where the block starts.
	Line int `json:"line,omitempty"`
	// Note says what the reader left out of the block as written (a chat
	// page's lines copied with it, Markdown escapes); its result tells the
	// LLM.
	Note string `json:"note,omitempty"`
	Path string `json:"path,omitempty"`
	// Content is the file body of CREATE_FILE or the replacement text of a
	// line-range EDIT_FILE.
	Content   string `json:"content,omitempty"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Edits     []Edit `json:"edits,omitempty"`
	Command   string `json:"command,omitempty"`
	// Dir is the working folder of RUN_COMMAND, relative to the workspace.
	Dir string `json:"dir,omitempty"`
	// Timeout overrides the session's command timeout when non-zero.
	Timeout Duration          `json:"timeout,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Text    string            `json:"text,omitempty"`
	Error   string            `json:"error,omitempty"`
	// Encoding is Base64 when CREATE_FILE's Content is the base64 text of
	// the bytes to write, or when READ_FILE must return its content as
	// base64. Empty means text.
	Encoding string `json:"encoding,omitempty"`

	// NoOverwrite makes CREATE_FILE fail when the file exists.
	NoOverwrite bool `json:"noOverwrite,omitempty"`
	// Literal makes EDIT_FILE's Edits exact: each Search replaces its first
	// occurrence in the text the previous pair left, byte for byte, with
	// Replace taken literally; no tolerant matching, no uniqueness rule, no
	// pair skipped as already applied. All pairs apply or none does.
	Literal bool `json:"literal,omitempty"`
	// SplitOutput asks RUN_COMMAND for stdout and stderr separately
	// (Result.Stdout, Result.Stderr) rather than interleaved in Output.
	SplitOutput bool `json:"splitOutput,omitempty"`
	// Inline asks READ_FILE for the content in its Result (Content,
	// Encoding, Size) instead of in the next request; Path is then one file,
	// never a glob.
	Inline bool `json:"inline,omitempty"`
}

// IsLineRange reports whether an EDIT_FILE replaces a line range rather than
// applying search/replace pairs.
func (c Command) IsLineRange() bool {
	return c.Type == EditFile && len(c.Edits) == 0 && (c.StartLine != 0 || c.EndLine != 0)
}

// ChangesFiles reports whether the command may change the workspace's files.
func (c Command) ChangesFiles() bool {
	switch c.Type {
	case CreateFile, EditFile, DeleteFile:
		return true
	}
	return false
}

// Duration is a RUN_COMMAND's timeout, written in JSON as a Go duration
// ("1m0s").
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Status is the outcome of one command.
type Status string

// The outcomes of a command.
const (
	OK          Status = "ok"
	Failed      Status = "failed"      // every error: bad input, I/O, exit codes
	Rejected    Status = "rejected"    // a path outside the workspace
	Denied      Status = "denied"      // by the policy or the person
	Interrupted Status = "interrupted" // cut short by a crash; not run again
)

// Cause says why a command failed or was denied, for front ends that
// report failures by kind.
type Cause string

// The causes an engine reports. Other failures leave Cause empty.
const (
	CauseExists   Cause = "exists"    // CREATE_FILE with NoOverwrite
	CauseNotFound Cause = "not_found" // the file to edit, delete or read
	CausePolicy   Cause = "policy"    // denied by the policy's rules
	CausePerson   Cause = "person"    // denied by the person
	// CauseDeadline: the run's own time limit interrupted the command.
	CauseDeadline Cause = "deadline"
)

// Result is what happened when one command was carried out.
type Result struct {
	Type   Type   `json:"type"`
	Path   string `json:"path,omitempty"`
	Status Status `json:"status"`
	// Summary is the one line shown after [OK] or [FAILED]; Output the
	// command's output or further detail; Diff a file change's.
	Summary    string `json:"summary"`
	Output     string `json:"output,omitempty"`
	Diff       string `json:"diff,omitempty"`
	Added      int    `json:"added,omitempty"`
	Removed    int    `json:"removed,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	DurationMS int64  `json:"durationMs,omitempty"`
	Command    string `json:"command,omitempty"` // a RUN_COMMAND's text
	// Changed says what a RUN_COMMAND changed in the workspace, on one
	// line ("changed: go.sum (edited), build/ (3 files new)").
	Changed string `json:"changed,omitempty"`

	// Stdout and Stderr are a RUN_COMMAND's streams with SplitOutput.
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	TimedOut bool   `json:"timedOut,omitempty"`
	// ApprovedAll: it ran under an earlier approval of all like it.
	ApprovedAll bool `json:"approvedAll,omitempty"`
	// Content is an Inline READ_FILE's content (base64 with Encoding),
	// Size the file's size.
	Content  string `json:"content,omitempty"`
	Encoding string `json:"encoding,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Cause    Cause  `json:"cause,omitempty"`
	// Reason is why a Denied or Rejected command was refused, without
	// courier's advice around it.
	Reason string    `json:"reason,omitempty"`
	Time   time.Time `json:"time,omitzero"` // when it finished
}

// Success reports whether the command did what it was asked.
func (r Result) Success() bool { return r.Status == OK }

// Words are a front end's names for courier's commands. The engine and the
// code that shows files advise the LLM in results and notices ("change it
// with a RUN_COMMAND instead"); they take the names from the session's
// front end, so that only a front end knows its protocol's syntax.
type Words interface {
	// Name names a command of type t as a noun: "RUN_COMMAND" in the tag
	// protocol, "shell operation" in the JSON one.
	Name(t Type) string
	// ReadLines is the command that shows lines from to to of a file.
	ReadLines(path string, from, to int) string
	// MoreTime says how a command asks for a longer time limit.
	MoreTime() string
	// Output says how a command's stdout and stderr come back.
	Output() string
}

// LineRange names the lines a read asks for, as its result says them:
// " lines 400-464", " from line 400", " lines 1-464", or "" for the whole
// file (0 for a bound not given).
func LineRange(start, end int) string {
	switch {
	case start > 0 && end > 0:
		return fmt.Sprintf(" lines %d-%d", start, end)
	case start > 0:
		return fmt.Sprintf(" from line %d", start)
	case end > 0:
		return fmt.Sprintf(" lines 1-%d", end)
	}
	return ""
}
