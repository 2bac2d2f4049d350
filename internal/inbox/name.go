// Package inbox notices reply files that a person saves into courier's inbox
// folder, and hands each one over only once it is completely written.
package inbox

import (
	"path/filepath"
	"strings"
)

// replyExts are the extensions a reply may have; the protocol names .txt, and
// chats offer "save as" .md just as often.
var replyExts = []string{".txt", ".md"}

// IsReply reports whether a file name is a reply candidate: it ends in .txt
// or .md (in any case), is not hidden, and is not an editor's or browser's
// temporary or partial file. Only the last element of name is considered.
//
// Partial downloads (".part", ".crdownload", ".download", ".partial"), swap
// and backup files (".swp", ".swx", "~"), atomic-write temporaries
// ("name.txt.tmp") and lock files (".~lock.name#", "~$name.txt") are rejected
// so that only the finished file, which appears under its final name, counts.
func IsReply(name string) bool {
	base := filepath.Base(name)
	if base == "." || base == string(filepath.Separator) {
		return false
	}
	// Hidden covers vim swap files, emacs locks (".#x") and LibreOffice
	// locks (".~lock.x#").
	if strings.HasPrefix(base, ".") {
		return false
	}
	// "#x.txt#" is an emacs autosave; "~$x.txt" an Office owner file.
	if strings.HasPrefix(base, "#") || strings.HasPrefix(base, "~") {
		return false
	}
	ext := strings.ToLower(filepath.Ext(base))
	for _, want := range replyExts {
		if ext == want && len(base) > len(ext) {
			return true
		}
	}
	// Every temporary suffix (~, .swp, .part, .tmp, ...) lands here because
	// the name no longer ends in a reply extension.
	return false
}
