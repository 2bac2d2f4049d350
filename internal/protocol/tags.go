package protocol

import (
	"fmt"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/frontend"
)

// Tags is the CodingAgent tag protocol as a courier front end: requests
// with HEADER, PROTOCOL, CONTEXT and PROMPT sections, replies made of
// [COMMAND] blocks.
type Tags struct{}

// TagsName is the name sessions record for this front end.
const TagsName = "tags"

// Name implements frontend.FrontEnd.
func (Tags) Name() string { return TagsName }

// Render implements frontend.FrontEnd.
func (Tags) Render(t frontend.Turn) (string, []frontend.Part) {
	return RenderLayout(t, tagsLayout())
}

// Parse implements frontend.FrontEnd.
func (Tags) Parse(text string) frontend.Parsed { return Parse(text) }

// NoCommands implements frontend.FrontEnd.
func (Tags) NoCommands() string { return NoCommandsNotice }

// Words implements frontend.FrontEnd: a command is named by its tag.
func (Tags) Words() command.Words { return tagWords{} }

type tagWords struct{}

func (tagWords) Name(t command.Type) string { return string(t) }

func (tagWords) ReadLines(path string, from, to int) string {
	return fmt.Sprintf("[READ_FILE path=%q lines=\"%d-%d\"]", path, from, to)
}

func (tagWords) MoreTime() string { return `timeout="..."` }

func (tagWords) Output() string { return "stdout and stderr are merged in the order written" }
