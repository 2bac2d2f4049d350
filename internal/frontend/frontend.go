// Package frontend defines what a reply protocol gives courier's runner:
// the text of each request, and the reading of a reply into commands. The
// tag protocol (internal/protocol) is one front end; every other part of
// courier works on the command model and never names a protocol's syntax.
package frontend

import (
	"strings"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/workspace"
)

// FrontEnd is one protocol between courier and the LLM.
type FrontEnd interface {
	// Name identifies the protocol in session state ("tags", "json").
	Name() string
	// Render writes the whole text of the request of turn t, and the
	// sizes of its parts.
	Render(t Turn) (string, []Part)
	// Parse reads decoded reply text. It never fails: what it cannot
	// understand becomes a command.ParseError the LLM is told about.
	Parse(text string) Parsed
	// NoCommands is told to the LLM when its reply held no command at all.
	NoCommands() string
	// Words names the protocol's commands in the advice that courier's
	// engine and file display give the LLM.
	Words() command.Words
}

// Turn is the turn a request shows, as the runner hands it to a front
// end: the front end asks for the pieces it shows, and the runner reads
// each from the workspace or the session's history only then.
type Turn interface {
	// Head is what the session's state says: Request's fields but for
	// the pieces below, which are not read from it.
	Head() Request
	Listing() []workspace.Entry
	LastResults() []command.Result
	LastCommands() []command.Command
	// RequestedFiles are the files the LLM asked for, within the room
	// for them, and a note of what had no room.
	RequestedFiles() ([]FileContent, string)
	FirstPack() *Pack
}

// Request is everything one request to the LLM shows, whatever the
// protocol: a turn with every piece at hand.
type Request struct {
	Session  string
	Sequence int
	// Task is the session's task; FollowUps the tasks added since it was
	// first complete.
	Task      string
	FollowUps []string
	// Prompt is what the PROMPT section asks for when it is not the task
	// of a first request or the request to continue (a follow-up task).
	Prompt string
	// Reminder is set when the request carries a short reminder instead of
	// the whole protocol (a later request of the same chat).
	Reminder bool
	// Environment describes the machine (the first request of a chat).
	Environment string
	// Messages are the person's words to the LLM.
	Messages []string
	Files    []workspace.Entry
	// Notices come before the results: things the person did (an undo) or
	// that were wrong with the reply as a whole.
	Notices []string
	// Commands and Results are the last reply's commands and what each
	// came to; Results is nil in the first request.
	Commands  []command.Command
	Results   []command.Result
	Requested []FileContent
	// LeftOut, when set, follows Requested: which files and lines the
	// request had no room for, and how to ask for them.
	LeftOut string
	// Pack, when set, adds the first request's pack after Requested.
	Pack *Pack
	// ReadLines is the most lines of one file a request shows (the
	// read_lines setting; 0: no cut), for a front end whose results carry
	// file content.
	ReadLines int
	// ReadBytes bounds the file contents those results show, in bytes
	// (0: no bound).
	ReadBytes int
}

// The methods below make a Request a Turn with its pieces at hand (the
// first request whose protocol 'show --full' puts back, or a test).
func (r Request) Head() Request                           { return r }
func (r Request) Listing() []workspace.Entry              { return r.Files }
func (r Request) LastResults() []command.Result           { return r.Results }
func (r Request) LastCommands() []command.Command         { return r.Commands }
func (r Request) RequestedFiles() ([]FileContent, string) { return r.Requested, r.LeftOut }
func (r Request) FirstPack() *Pack                        { return r.Pack }

// FileContent is one requested file as a request shows it.
type FileContent struct {
	Path string
	// Text is the content as shown (numbered), or the reason it cannot be.
	Text string
	// First and Last are the lines shown when they are not the whole file
	// (0 otherwise); Total is the file's line count then, -1 when it is
	// too large to count.
	First, Last, Total int
}

// Pack is the files the first request shows after the requested ones,
// read one at a time as the request is written.
type Pack struct {
	// Files calls add with each file in turn. A file's Text is good only
	// during the call.
	Files func(add func(FileContent))
}

// Part is one part of a request (the protocol, the workspace listing,
// the results, each requested file, the prompt) and its size, so that the
// person can see what makes a request large.
type Part struct {
	Name  string
	Bytes int
}

// Parsed is a reply read by a front end.
type Parsed struct {
	// Session is the session id the reply echoes, lower case; "" if none.
	Session string
	// Sequence is the request number the reply echoes; 0 if none.
	Sequence int
	// Commands are in order, parse errors included.
	Commands []command.Command
}

// IsRequest reports whether text is one of courier's own requests, saved
// or copied by mistake where a reply belongs: its examples must never run.
// Every front end writes requests with the same four sections.
func IsRequest(text string) bool {
	text = strings.TrimPrefix(text, "\ufeff")
	return strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "=== HEADER ===") &&
		strings.Contains(text, "\n=== PROTOCOL ===\n")
}
