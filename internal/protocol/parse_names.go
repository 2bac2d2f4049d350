package protocol

import (
	"github.com/courier-agent/courier/internal/command"
	"github.com/courier-agent/courier/internal/textdist"
)

// nameHints maps names LLMs use instead of courier's (letters only, upper
// case) to the command they mean.
var nameHints = map[string]command.Type{
	"CREATE": command.CreateFile, "WRITE": command.CreateFile, "WRITEFILE": command.CreateFile,
	"NEWFILE": command.CreateFile, "SAVEFILE": command.CreateFile, "CREATEFILES": command.CreateFile,
	"FILE": command.CreateFile,
	"EDIT": command.EditFile, "MODIFY": command.EditFile, "MODIFYFILE": command.EditFile,
	"UPDATE": command.EditFile, "UPDATEFILE": command.EditFile, "PATCH": command.EditFile,
	"PATCHFILE": command.EditFile, "REPLACE": command.EditFile, "EDITFILES": command.EditFile,
	"DELETE": command.DeleteFile, "REMOVE": command.DeleteFile, "REMOVEFILE": command.DeleteFile,
	"RM":   command.DeleteFile,
	"READ": command.ReadFile, "VIEW": command.ReadFile, "VIEWFILE": command.ReadFile,
	"OPEN": command.ReadFile, "OPENFILE": command.ReadFile, "CAT": command.ReadFile,
	"READFILES": command.ReadFile, "SHOWFILE": command.ReadFile,
	"RUN": command.RunCommand, "COMMAND": command.RunCommand, "EXEC": command.RunCommand,
	"EXECUTE": command.RunCommand, "SHELL": command.RunCommand, "RUNSHELL": command.RunCommand,
	"RUNCMD": command.RunCommand, "CMD": command.RunCommand, "RUNCOMMANDS": command.RunCommand,
	"MSG": command.Message, "SAY": command.Message,
	"FINISH": command.Done, "FINISHED": command.Done, "COMPLETE": command.Done,
	"COMPLETED": command.Done, "TASKDONE": command.Done, "TASKCOMPLETE": command.Done,
}

// maxNameLetters bounds the names checked for near misses; longer ones
// are not misspellings of a command.
const maxNameLetters = 40

// letters keeps the ASCII letters of s, upper-cased, in buf.
func letters(buf *[maxNameLetters]byte, s string) string {
	n := 0
	for i := 0; i < len(s) && n < len(buf); i++ {
		if c := s[i]; isLetter(c) {
			buf[n] = c &^ 0x20
			n++
		}
	}
	return string(buf[:n])
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
// within a small edit distance.
func nearMiss(words string) (command.Type, bool) {
	if len(words) > maxNameLetters {
		return "", false
	}
	var buf [maxNameLetters]byte
	w := letters(&buf, words)
	if typ, ok := nameHints[w]; ok {
		return typ, true
	}
	for _, k := range knownLetters {
		if len(w) < len(k.letters)-2 || len(w) > len(k.letters)+2 {
			continue // too far apart in length to be a near miss
		}
		d := textdist.Levenshtein(w, k.letters)
		if d == 0 || (len(w) >= 8 && d <= 2) || (len(w) >= 5 && d <= 1) {
			return k.typ, true
		}
	}
	return "", false
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

// commandLike reports whether an unknown tag line is meant as a command:
// a near miss of a known name, or a name with attributes. Markdown such as
// [x], [1] or [NOTE] is not.
func commandLike(t *tagLine) bool {
	if _, ok := nearMiss(t.words); ok {
		return true
	}
	return t.nattrs > 0
}
