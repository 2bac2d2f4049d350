package benchcmp

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

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

// pack runs `courier new --include '**'` on tree in a root of its own;
// request returns the path of a request it wrote (each run writes the
// same pack).
func pack(e *Env, tree string, budget string, flags ...string) (run func() error, request func() (string, error), err error) {
	run, request, _, err = packIn(e, tree, budget, flags...)
	return run, request, err
}

// packIn is pack, with clear to empty the root of what the runs wrote.
func packIn(e *Env, tree string, budget string, flags ...string) (run func() error, request func() (string, error), clear func(), err error) {
	bin, err := e.Courier()
	if err != nil {
		return nil, nil, nil, err
	}
	root, err := os.MkdirTemp(e.Dir, "packroot-")
	if err != nil {
		return nil, nil, nil, err
	}
	run = func() error {
		args := append([]string{"--root", root, "--workspace", tree, "--token-budget", budget, "--quiet"}, flags...)
		cmd := exec.CommandContext(e.Ctx, bin, append(args, "new", "--no-watch", "--include", "**", "explain how this code is organised")...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("courier new --include: %w\n%s", err, tail(out))
		}
		return nil
	}
	request = func() (string, error) {
		entries, err := os.ReadDir(filepath.Join(root, "outbox"))
		if err != nil || len(entries) == 0 {
			return "", fmt.Errorf("no request written: %v", err)
		}
		return filepath.Join(root, "outbox", entries[0].Name()), nil
	}
	clear = func() {
		entries, _ := os.ReadDir(root)
		for _, d := range entries {
			os.RemoveAll(filepath.Join(root, d.Name()))
		}
	}
	return run, request, clear, nil
}

// requestSize is the size of the request a pack wrote.
func requestSize(request func() (string, error)) (int64, error) {
	p, err := request()
	if err != nil {
		return 0, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
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
	// The pack itself is timed without the description of the machine,
	// which waits on the slowest tool's --version (up to its 2 s
	// deadline) whatever is packed; the detail gives both.
	run, request, err := pack(e, tree, "100000", "--environment=false")
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
	cs, err := requestSize(request)
	if err != nil {
		return 0, "", err
	}
	info, err := os.Stat(out)
	if err != nil {
		return 0, "", err
	}
	full, _, err := pack(e, tree, "100000")
	if err != nil {
		return 0, "", err
	}
	tf, _, err := SideBySide(e, rounds, full, func() error { return nil })
	if err != nil {
		return 0, "", err
	}
	return float64(tr) / float64(tc), fmt.Sprintf("courier %s (request %s; %s with the machine described), repomix %s (pack %s)",
		ms(tc), human.Bytes(cs), ms(tf), ms(tr), human.Bytes(info.Size())), nil
}

// measureTar times courier's pack of tree with the token budget given
// (without the description of the machine, see measureRepomix) next to
// tar archiving every file the pack chooses from (FILES, all of them
// matching --include '**'): with a budget courier reads only what fits,
// with none it reads them all, as tar does.
func measureTar(e *Env, sub, budget string) (float64, string, error) {
	tree, err := goTree(e, sub)
	if err != nil {
		return 0, "", err
	}
	run, request, clear, err := packIn(e, tree, budget, "--environment=false")
	if err != nil {
		return 0, "", err
	}
	if err := run(); err != nil {
		return 0, "", err
	}
	_, packed, err := packedList(e, tree, request)
	if err != nil {
		return 0, "", err
	}
	list, files, err := fileList(e, tree)
	if err != nil {
		return 0, "", err
	}
	tarOut := filepath.Join(e.Dir, "tar-size")
	tar := func() error {
		return e.Shell(tree, fmt.Sprintf("tar cf - -T %s | wc -c > %s", list, tarOut))
	}
	// Each run writes its request (124 MB for the whole src). Before
	// every run of courier the last one's session is removed, and before
	// every run of either everything is synced: each run starts from the
	// same state, and none waits on the writeback of what another wrote.
	// Without the removal, each run would also hold the memory of every
	// request before it in the page cache, which on a virtual machine can
	// cost more than the pack.
	fresh := func() {
		clear()
		syscall.Sync()
	}
	tc, tt, err := SideBySideSettled(e, e.Rounds(5), fresh, syscall.Sync, run, tar)
	if err != nil {
		return 0, "", err
	}
	cs, err := requestSize(request)
	if err != nil {
		return 0, "", err
	}
	ts, _ := os.ReadFile(tarOut)
	return float64(tc) / float64(tt), fmt.Sprintf("courier %s (request %s, %d of the files), tar of the %d files %s (%s bytes)",
		ms(tc), human.Bytes(cs), packed, files, ms(tt), strings.TrimSpace(string(ts))), nil
}

// fileList writes every regular file of tree (.git left out) into a file
// for tar -T, once per run, and counts them.
func fileList(e *Env, tree string) (string, int, error) {
	n := 0
	list, err := Once(e, "filelist "+tree, func() (string, error) {
		var b strings.Builder
		err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
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
	if err != nil {
		return "", 0, err
	}
	data, err := os.ReadFile(list)
	if err != nil {
		return "", 0, err
	}
	n = strings.Count(string(data), "\n")
	return list, n, nil
}

// packedList writes the files a pack's request holds (its "--- PATH ---"
// sections) into a file for tar -T, and counts them.
func packedList(e *Env, tree string, request func() (string, error)) (string, int, error) {
	p, err := request()
	if err != nil {
		return "", 0, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", 0, fmt.Errorf("the pack's request: %w", err)
	}
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		name, ok := strings.CutPrefix(line, "--- ")
		if !ok || strings.HasPrefix(name, "end ") {
			continue
		}
		if name, ok = strings.CutSuffix(name, " ---"); !ok {
			continue
		}
		// The pack's last part, its summary, is named by the patterns.
		if info, err := os.Lstat(filepath.Join(tree, name)); err != nil || !info.Mode().IsRegular() {
			continue
		}
		b.WriteString(name + "\n")
		n++
	}
	if n == 0 {
		return "", 0, fmt.Errorf("the request %s packs no file", p)
	}
	list := filepath.Join(e.Dir, filepath.Base(filepath.Dir(filepath.Dir(p)))+"-files.txt")
	return list, n, os.WriteFile(list, []byte(b.String()), 0o644)
}
