// Package inbox notices reply files that a person saves into courier's inbox
// folder, and hands each one over only once it is completely written.
package inbox

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// replyExts make a file a reply whatever it holds (chats save .md as often
// as .txt); others count when they hold command blocks or a courier header.
var replyExts = []string{".txt", ".md"}

// tempSuffixes mark partial downloads, swap, backup and temporary files.
var tempSuffixes = []string{".part", ".crdownload", ".download", ".partial", ".swp", ".swx", ".tmp", "~"}

// IsReply reports whether a file name may be a reply: not hidden, nor an
// editor's or browser's temporary, partial or lock file.
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

// namedReply reports whether name's extension makes it a reply (replyExts).
func namedReply(name string) bool {
	base := filepath.Base(name)
	ext := strings.ToLower(filepath.Ext(base))
	return slices.Contains(replyExts, ext) && len(base) > len(ext)
}

// Pending lists the reply files in dir, oldest first, ties by name.
func Pending(dir string) ([]string, error) {
	found, err := listReplies(dir)
	if err != nil {
		return nil, err
	}
	sortOldestFirst(found)
	paths := make([]string, len(found))
	for i, f := range found {
		paths[i] = f.path
	}
	return paths, nil
}

type reply struct {
	path string
	info fs.FileInfo
}

// listReplies returns dir's reply candidates, but files gone meanwhile.
func listReplies(dir string) ([]reply, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list inbox: %w", err)
	}
	var found []reply
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsReply(e.Name()) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list inbox: %w", err)
		}
		found = append(found, reply{path: filepath.Join(dir, e.Name()), info: info})
	}
	return found, nil
}

// sortOldestFirst orders replies as the protocol processes them.
func sortOldestFirst(rs []reply) {
	slices.SortFunc(rs, func(a, b reply) int {
		return cmp.Or(a.info.ModTime().Compare(b.info.ModTime()), strings.Compare(a.path, b.path))
	})
}
