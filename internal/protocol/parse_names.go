package protocol

import (
	"github.com/courier-agent/courier/internal/command"
)

// hintOf returns the command a name LLMs use instead of courier's
// (letters only, upper case) means, or "".
func hintOf(w []byte) command.Type {
	switch string(w) {
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

// letters keeps the ASCII letters of s, upper-cased, in buf.
func letters(buf *[maxNameLetters]byte, s string) []byte {
	n := 0
	for i := 0; i < len(s) && n < len(buf); i++ {
		if c := s[i]; isLetter(c) {
			buf[n] = c &^ 0x20
			n++
		}
	}
	return buf[:n]
}

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
func nearMiss(words string) (command.Type, bool) {
	if len(words) > maxNameLetters {
		return "", false
	}
	var buf [maxNameLetters]byte
	w := letters(&buf, words)
	if typ := hintOf(w); typ != "" {
		return typ, true
	}
	edits := 0
	switch {
	case len(w) >= 8:
		edits = 2
	case len(w) >= 5:
		edits = 1
	}
	for _, k := range knownLetters {
		if len(w) < len(k.letters)-2 || len(w) > len(k.letters)+2 {
			continue // too far apart in length to be a near miss
		}
		if withinEdits(w, k.letters, edits) {
			return k.typ, true
		}
	}
	return "", false
}

// withinEdits reports whether at most k single-letter insertions,
// deletions and substitutions turn a into b. A common first letter is
// always best matched, so only differing letters branch.
func withinEdits(a []byte, b string, k int) bool {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	if len(a) == 0 || len(b) == 0 {
		return len(a)+len(b) <= k
	}
	if k == 0 {
		return false
	}
	return withinEdits(a[1:], b[1:], k-1) || withinEdits(a[1:], b, k-1) || withinEdits(a, b[1:], k-1)
}

// isCommandName reports a known command name or a near miss of one.
func isCommandName(name string) bool {
	if typeOf(name) != "" {
		return true
	}
	_, ok := nearMiss(name)
	return ok
}

// isUpperName reports an UPPER_SNAKE name as written, like "NOTE" or
// "WRITE_FILE" (not "x" or "Note").
func isUpperName(name string) bool {
	hasLetter := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
			return false
		case c >= 'A' && c <= 'Z':
			hasLetter = true
		}
	}
	return hasLetter
}

// commandLike reports whether an unknown tag line, with these words and
// this many attributes, is meant as a command: a near miss of a known
// name, or a name with attributes. Markdown such as [x], [1] or [NOTE] is
// not.
func (p *parser) commandLike(words string, nattrs int) bool {
	if nattrs > 0 {
		return true
	}
	_, near := nearMiss(words)
	return near
}
