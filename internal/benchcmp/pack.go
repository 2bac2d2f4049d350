package benchcmp

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/courier-agent/courier/internal/human"
)

// The first request's pack (--include) next to repomix, which people use
// to paste whole projects into a chat, and next to tar, the floor for
// reading the same files.

func packRows() []Row {
	var rows []Row
	for _, t := range []struct{ name, sub string }{{"Go's src/net", "net"}, {"Go's src", ""}} {
		rows = append(rows,
			Row{
				What: "packing " + t.name + " (--include '**', default budget)", Goal: "≥ 30× faster than repomix", Limit: 30, Higher: true, Unit: "×",
				Measure: func(e *Env) (float64, string, error) { return measureRepomix(e, t.sub) },
			},
			Row{
				What: "packing " + t.name + " (--include '**', default budget)", Goal: "≤ 2× tar cf - FILES | wc -c", Limit: 2, Unit: "×",
				Measure: func(e *Env) (float64, string, error) { return measureTar(e, t.sub, "100000") },
			},
			Row{
				What: "packing " + t.name + " whole (token_budget 0)", Goal: "≤ 2× tar cf - FILES | wc -c", Limit: 2, Unit: "×",
				Measure: func(e *Env) (float64, string, error) { return measureTar(e, t.sub, "0") },
			},
		)
	}
	return rows
}

// goTree copies Go's src (or one folder of it) into the scratch folder,
// once per run.
func goTree(e *Env, sub string) (string, error) {
	return Once(e, "gotree "+sub, func() (string, error) {
		src := filepath.Join(runtime.GOROOT(), "src", sub)
		if _, err := os.Stat(src); err != nil {
			return "", fmt.Errorf("%w: no Go source tree at %s", errSkip, src)
		}
		dst := filepath.Join(e.Dir, "trees", "src-"+strings.ReplaceAll(sub, "/", "-"))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if out, err := exec.CommandContext(e.Ctx, "cp", "-r", src, dst).CombinedOutput(); err != nil {
			return "", fmt.Errorf("copy %s: %w\n%s", src, err, out)
		}
		return dst, nil
	})
}

// pack runs `courier new --include '**'` on tree in a root of its own and
// returns the size of the request it wrote.
func pack(e *Env, tree string, budget string) (func() error, func() (int64, error), error) {
	bin, err := e.Courier()
	if err != nil {
		return nil, nil, err
	}
	root, err := os.MkdirTemp(e.Dir, "packroot-")
	if err != nil {
		return nil, nil, err
	}
	run := func() error {
		cmd := exec.CommandContext(e.Ctx, bin, "--root", root, "--workspace", tree, "--token-budget", budget, "--quiet",
			"new", "--no-watch", "--include", "**", "explain how this code is organised")
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("courier new --include: %w\n%s", err, tail(out))
		}
		return nil
	}
	size := func() (int64, error) {
		entries, err := os.ReadDir(filepath.Join(root, "outbox"))
		if err != nil || len(entries) == 0 {
			return 0, fmt.Errorf("no request written: %v", err)
		}
		info, err := entries[len(entries)-1].Info()
		if err != nil {
			return 0, err
		}
		return info.Size(), nil
	}
	return run, size, nil
}

// repomix installs repomix from npm into the scratch folder, once per run.
func repomix(e *Env) (string, error) {
	return Once(e, "repomix", func() (string, error) {
		if _, err := exec.LookPath("npm"); err != nil {
			return "", fmt.Errorf("%w: npm is not installed", errSkip)
		}
		dir := filepath.Join(e.Dir, "npm")
		e.Logf("installing repomix from npm into %s", dir)
		cmd := exec.CommandContext(e.Ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error", "repomix")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("npm install repomix: %w\n%s", err, tail(out))
		}
		return filepath.Join(dir, "node_modules", ".bin", "repomix"), nil
	})
}

func measureRepomix(e *Env, sub string) (float64, string, error) {
	tree, err := goTree(e, sub)
	if err != nil {
		return 0, "", err
	}
	bin, err := repomix(e)
	if err != nil {
		return 0, "", err
	}
	run, size, err := pack(e, tree, "100000")
	if err != nil {
		return 0, "", err
	}
	// repomix writes its pack into the folder it packs: moved out after
	// each run, so that the next run packs the same files.
	out := filepath.Join(e.Dir, "repomix-output.xml")
	rx := func() error {
		cmd := exec.CommandContext(e.Ctx, bin)
		cmd.Dir = tree
		if o, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("repomix: %w\n%s", err, tail(o))
		}
		return os.Rename(filepath.Join(tree, "repomix-output.xml"), out)
	}
	rounds := e.Rounds(3)
	tc, tr, err := SideBySide(e, rounds, run, rx)
	if err != nil {
		return 0, "", err
	}
	cs, err := size()
	if err != nil {
		return 0, "", err
	}
	info, err := os.Stat(out)
	if err != nil {
		return 0, "", err
	}
	return float64(tr) / float64(tc), fmt.Sprintf("courier %s (request %s), repomix %s (pack %s)",
		ms(tc), human.Bytes(cs), ms(tr), human.Bytes(info.Size())), nil
}

// measureTar times courier's pack of tree with the token budget given
// next to tar reading every file it matches (FILES: all files but tool
// folders).
func measureTar(e *Env, sub, budget string) (float64, string, error) {
	tree, err := goTree(e, sub)
	if err != nil {
		return 0, "", err
	}
	list, err := fileList(e, tree)
	if err != nil {
		return 0, "", err
	}
	run, size, err := pack(e, tree, budget)
	if err != nil {
		return 0, "", err
	}
	tarOut := filepath.Join(e.Dir, "tar-size")
	tar := func() error {
		return e.Shell(tree, fmt.Sprintf("tar cf - -T %s | wc -c > %s", list, tarOut))
	}
	tc, tt, err := SideBySide(e, e.Rounds(3), run, tar)
	if err != nil {
		return 0, "", err
	}
	cs, err := size()
	if err != nil {
		return 0, "", err
	}
	ts, _ := os.ReadFile(tarOut)
	return float64(tc) / float64(tt), fmt.Sprintf("courier %s (request %s), tar %s (%s bytes)",
		ms(tc), human.Bytes(cs), ms(tt), strings.TrimSpace(string(ts))), nil
}

// fileList writes the files of tree a listing covers (tool folders left
// out) into a file for tar -T.
func fileList(e *Env, tree string) (string, error) {
	return Once(e, "filelist "+tree, func() (string, error) {
		var b strings.Builder
		err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(tree, p)
				b.WriteString(rel + "\n")
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		list := filepath.Join(e.Dir, "files-"+filepath.Base(tree)+".txt")
		return list, os.WriteFile(list, []byte(b.String()), 0o644)
	})
}
