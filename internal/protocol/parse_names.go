package protocol

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/textdist"
)

// hintOf returns the command a name LLMs use instead of courier's
// (letters only, upper case) means, or "".
func hintOf(w string) command.Type {
	switch w {
	case "CREATE", "WRITE", "WRITEFILE", "NEWFILE", "SAVEFILE", "CREATEFILES", "FILE":
		return command.CreateFile
	case "EDIT", "MODIFY", "MODIFYFILE", "UPDATE", "UPDATEFILE", "PATCH", "PATCHFILE", "REPLACE", "EDITFILES":
		return command.EditFile
	case "DELETE", "REMOVE", "REMOVEFILE", "RM":
		return command.DeleteFile
	case "READ", "VIEW", "VIEWFILE", "OPEN", "OPENFILE", "CAT", "READFILES", "SHOWFILE":
		return command.ReadFile
	case "RUN", "COMMAND", "EXEC", "EXECUTE", "SHELL", "RUNSHELL", "RUNCMD", "CMD", "RUNCOMMANDS":
		return command.RunCommand
	case "MSG", "SAY":
		return command.Message
	case "FINISH", "FINISHED", "COMPLETE", "COMPLETED", "TASKDONE", "TASKCOMPLETE":
		return command.Done
	}
	return ""
}

// maxNameLetters bounds the names checked for near misses; longer ones
// are not misspellings of a command.
const maxNameLetters = 40

// knownLetters are the command names without separators.
var knownLetters = []struct {
	typ     command.Type
	letters string
}{
	{command.CreateFile, "CREATEFILE"}, {command.EditFile, "EDITFILE"},
	{command.DeleteFile, "DELETEFILE"}, {command.ReadFile, "READFILE"},
	{command.RunCommand, "RUNCOMMAND"}, {command.Message, "MESSAGE"},
	{command.Done, "DONE"},
}

// nearMiss reports the command a misspelt tag name most likely means:
// a known name spelt with other separators, a common synonym, or a name
// within a small edit distance (one for names of five letters or more,
// two from eight).
func nearMiss(words string) command.Type {
	if len(words) > maxNameLetters {
		return ""
	}
	w := strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && isLetter(byte(r)) {
			return r &^ 0x20
		}
		return -1
	}, words)
	if typ := hintOf(w); typ != "" {
		return typ
	}
	edits := 0
	switch {
	case len(w) >= 8:
		edits = 2
	case len(w) >= 5:
		edits = 1
	}
	for _, k := range knownLetters {
		// The distance is at least the difference in length.
		if max(len(w)-len(k.letters), len(k.letters)-len(w)) <= edits && (w == k.letters || edits > 0 && textdist.Levenshtein(w, k.letters) <= edits) {
			return k.typ
		}
	}
	return ""
}

// isCommandName reports a known command name or a near miss of one.
func isCommandName(name string) bool { return typeOf(name) != "" || nearMiss(name) != "" }

// isUpperName reports an UPPER_SNAKE name as written, like "NOTE" or
// "WRITE_FILE" (not "x" or "Note").
func isUpperName(name string) bool {
	return !strings.ContainsFunc(name, unicode.IsLower) && strings.ContainsFunc(name, unicode.IsUpper)
}

// commandLike reports whether an unknown tag line is meant as a command:
// a name with attributes, or a near miss of a known name. Markdown such as
// [x], [1] or [NOTE] is not.
func (t *tagLine) commandLike() bool { return len(t.attrs) > 0 || nearMiss(t.words) != "" }
