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

// Pending lists the reply files directly in dir, regular files only,
// oldest modification first, ties broken by name.
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

// listReplies returns dir's reply candidates, skipping files that vanish
// meanwhile (moved to processed/).
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
