// Package inbox notices reply files that a person saves into courier's inbox
// folder, and hands each one over only once it is completely written.
package inbox

import (
	"path/filepath"
	"strings"
)

// replyExts are the extensions of files taken as replies whatever they
// hold; the protocol names .txt, and chats offer "save as" .md just as
// often. A file with another extension (reply, answer.html, chat.markdown)
// is taken when it holds command blocks or a courier header.
var replyExts = []string{".txt", ".md"}

// tempSuffixes mark files still being written under a temporary name:
// partial downloads, swap and backup files, atomic-write temporaries.
var tempSuffixes = []string{".part", ".crdownload", ".download", ".partial", ".swp", ".swx", ".tmp", "~"}

// IsReply reports whether a file name is a reply candidate: it is not
// hidden, and is not an editor's or browser's temporary or partial file.
// Only the last element of name is considered.
//
// Partial downloads (".part", ".crdownload", ".download", ".partial"), swap
// and backup files (".swp", ".swx", "~"), atomic-write temporaries
// ("name.txt.tmp") and lock files (".~lock.name#", "~$name.txt") are rejected
// so that only the finished file, which appears under its final name, counts.
func IsReply(name string) bool {
	base := filepath.Base(name)
	if base == "." || base == string(filepath.Separator) || base == "" {
		return false
	}
	// Hidden covers vim swap files, emacs locks (".#x") and LibreOffice
	// locks (".~lock.x#").
	if strings.HasPrefix(base, ".") {
		return false
	}
	// "#x.txt#" is an emacs autosave; "~$x.txt" an Office owner file.
	if strings.HasPrefix(base, "#") || strings.HasPrefix(base, "~") || strings.HasSuffix(base, "#") {
		return false
	}
	lower := strings.ToLower(base)
	for _, suffix := range tempSuffixes {
		if strings.HasSuffix(lower, suffix) {
			return false
		}
	}
	return true
}

// namedReply reports whether a file's extension makes it a reply whatever
// it holds (.txt, .md).
func namedReply(name string) bool {
	base := filepath.Base(name)
	ext := strings.ToLower(filepath.Ext(base))
	for _, want := range replyExts {
		if ext == want && len(base) > len(ext) {
			return true
		}
	}
	return false
}
