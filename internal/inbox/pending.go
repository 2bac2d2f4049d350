package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Pending lists the reply files directly in dir (not in subfolders such as
// processed/), oldest modification time first, ties broken by name. The
// paths are dir joined with each file name. Only regular files count: a
// symlink or folder with a reply-like name is ignored.
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

// reply is a candidate file seen in a listing.
type reply struct {
	path string
	info fs.FileInfo
}

// listReplies reads dir and returns its reply candidates, skipping files
// that vanish while it looks (the consumer moves processed replies away).
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

// sortOldestFirst orders replies as the protocol processes them: by last
// write time, then by name so equal times give a stable order.
func sortOldestFirst(rs []reply) {
	sort.Slice(rs, func(i, j int) bool {
		return olderThan(rs[i].info.ModTime(), rs[i].path, rs[j].info.ModTime(), rs[j].path)
	})
}

func olderThan(ti time.Time, pi string, tj time.Time, pj string) bool {
	if !ti.Equal(tj) {
		return ti.Before(tj)
	}
	return pi < pj
}
