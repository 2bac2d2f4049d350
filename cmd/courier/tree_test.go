package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// treelist DIR FILE writes a full listing of the tree at DIR into FILE,
// .git and every hidden path included: per path its type, permission bits
// (setuid, setgid and sticky too), and a file's size and SHA-256 or a
// symlink's target, never following a symlink. Two listings compared
// with cmp show whether an undo put a tree back exactly. Times are left
// out: undo does not restore them.
func cmdTreeList(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: treelist DIR FILE")
	}
	list, err := treeListing(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(list), 0o644))
}

// treeListing lists a tree one path a line, sorted.
func treeListing(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		mode := info.Mode()
		perm := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		line := fmt.Sprintf("%q %s %v", filepath.ToSlash(rel), kindOf(mode), perm)
		switch {
		case mode.IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += fmt.Sprintf(" %d %s", info.Size(), hex.EncodeToString(sum[:]))
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" -> %q", target)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}
