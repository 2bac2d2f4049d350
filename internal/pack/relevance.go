package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/courier-agent/courier/internal/workspace"
)

// candidates are the files the include patterns match, most relevant
// first: files named in the task or given by their path, then the rest by
// size, smallest first, then generated and vendored files by size. The
// listing's rules apply (.gitignore, tool folders), except to a file given
// by its path. problems says what could not be used of the patterns.
func candidates(ws *workspace.Workspace, opts Options) ([]candidate, []string) {
	var problems []string
	var globs []*workspace.Pattern
	explicit := map[string]bool{} // files given by their own path
	for _, inc := range opts.Include {
		clean, err := workspace.Clean(inc)
		if err != nil {
			problems = append(problems, fmt.Sprintf("(--include %s: %v)", strconv.Quote(inc), err))
			continue
		}
		if !workspace.IsGlob(clean) {
			info, err := ws.Stat(clean)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				problems = append(problems, fmt.Sprintf("(--include %s: no such file or folder)", strconv.Quote(inc)))
				continue
			case err != nil:
				problems = append(problems, fmt.Sprintf("(--include %s: %v)", strconv.Quote(inc), err))
				continue
			case !info.IsDir():
				explicit[clean] = true
				continue
			}
			if clean == "." {
				clean = "**"
			} else {
				clean += "/**"
			}
		}
		g, err := workspace.CompilePattern(clean)
		if err != nil {
			problems = append(problems, fmt.Sprintf("(--include %s: %v)", strconv.Quote(inc), err))
			continue
		}
		globs = append(globs, g)
	}
	files, err := ws.Files(workspace.ListOptions{GitIgnore: true})
	if err != nil {
		problems = append(problems, fmt.Sprintf("(cannot list the workspace: %v)", err))
	}
	out := make([]candidate, 0, len(files)+len(explicit))
	// Files given by their path come first; the listing names each file
	// once, and not again if it was given.
	given := map[string]bool{}
	add := func(p string, size int64) {
		c := candidate{path: p, size: size, tier: source}
		switch {
		case explicit[p] || namedIn(opts.Task, p):
			c.tier = named
		case isSecret(p):
			c.secret = true
		case isGenerated(p):
			c.tier = generated
		}
		out = append(out, c)
	}
	for p := range explicit {
		if info, err := ws.Stat(p); err == nil {
			given[p] = true
			add(p, info.Size())
		}
	}
	for _, f := range files {
		if given[f.Path] {
			continue
		}
		for _, g := range globs {
			if g.Match(f.Path) {
				add(f.Path, f.Size)
				break
			}
		}
	}
	// Paths are unique: the order is total, and needs no stable sort.
	slices.SortFunc(out, func(a, b candidate) int {
		switch {
		case a.tier != b.tier:
			return int(a.tier) - int(b.tier)
		case a.size != b.size:
			if a.size < b.size {
				return -1
			}
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	return out, problems
}

// namedIn reports whether the task names the file: its path, or its name
// as a word of its own (with a dot or slash in it, so that a file "main"
// is not named by every use of the word).
func namedIn(task, p string) bool {
	if task == "" {
		return false
	}
	if strings.Contains(task, p) {
		return true
	}
	base := path.Base(p)
	if !strings.ContainsAny(base, ".") {
		return false
	}
	for i := 0; ; {
		j := strings.Index(task[i:], base)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(base)
		if (start == 0 || !isWordByte(task[start-1])) && (end == len(task) || !isWordByte(task[end]) || task[end] == '.' && (end+1 == len(task) || !isWordByte(task[end+1]))) {
			return true
		}
		i = start + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// secretNames and secretExts are files that hold keys, passwords and
// tokens by convention: they stay out of a pack unless named.
var (
	secretNames = []string{
		".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", "_netrc", ".git-credentials",
		".pgpass", ".npmrc", ".pypirc", "credentials", "credentials.json", "credentials.yml",
		"credentials.yaml", "credentials.xml", ".htpasswd", "secrets.json", "secrets.yml", "secrets.yaml",
	}
	secretExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".asc", ".gpg", ".ppk"}
)

// isSecret reports a file whose name says it holds secrets: .env and its
// variants (.env.local, but not .env.example), private keys and
// certificates, credential stores.
func isSecret(p string) bool {
	name := strings.ToLower(path.Base(p))
	if slices.Contains(secretNames, name) {
		return true
	}
	if strings.HasPrefix(name, ".env.") {
		rest := name[len(".env."):]
		return rest != "example" && rest != "sample" && rest != "template" && rest != "dist"
	}
	return slices.Contains(secretExts, path.Ext(name))
}

// generatedDirs and generatedNames are where code comes from a tool or
// another project: packed last.
var (
	generatedDirs  = []string{"vendor", "third_party", "third-party", "node_modules", "bower_components", "dist", "external"}
	generatedNames = []string{"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "go.sum", "Cargo.lock",
		"composer.lock", "Gemfile.lock", "poetry.lock", "Pipfile.lock", "uv.lock", "flake.lock"}
	generatedSuffixes = []string{".min.js", ".min.css", ".map", ".pb.go", "_pb2.py", ".pb.cc", ".pb.h",
		"_generated.go", ".gen.go", ".g.dart", ".generated.ts", ".lock"}
)

// isGenerated reports a file that is generated or vendored by its path.
func isGenerated(p string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		if slices.Contains(generatedDirs, d) {
			return true
		}
	}
	name := path.Base(p)
	if slices.Contains(generatedNames, name) {
		return true
	}
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// isGeneratedText reports a file whose first lines say a tool wrote it
// (Go's "Code generated ... DO NOT EDIT." and the "@generated" mark).
func isGeneratedText(data []byte) bool {
	head := data[:min(len(data), 1024)]
	if i := bytes.Index(head, []byte("Code generated")); i >= 0 && bytes.Contains(head[i:], []byte("DO NOT EDIT")) {
		return true
	}
	return bytes.Contains(head, []byte("@generated"))
}
