package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A command's processes and memory are bounded by a control group made
// for it under courier's own, in cgroup v2 (delegated, or a container's)
// or the v1 pids and memory hierarchies (root only). Otherwise the
// launcher sets resource limits: processes per user, data size.

// Cgroup is the control group made for one command.
type Cgroup struct{ dirs []string }

// NewCgroup makes a control group bounded as l says.
func NewCgroup(l Limits) (*Cgroup, error) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read courier's control group: %w", err)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	// courier's group in each hierarchy: "cgroup2", or a v1 controller.
	groups := map[string]string{}
	for line := range strings.Lines(string(own)) {
		if f := strings.SplitN(strings.TrimSpace(line), ":", 3); len(f) == 3 && f[0] == "0" {
			groups["cgroup2"] = f[2]
		} else if len(f) == 3 {
			for _, ctl := range strings.Split(f[1], ",") {
				groups[ctl] = f[2]
			}
		}
	}
	name := "courier-" + rand.Text()[:12]
	// A memory-bound command stays out of swap, where it would slow the
	// machine instead of meeting its limit.
	swapMax := "max"
	if l.Memory > 0 {
		swapMax = "0"
	}
	var tried []string
	if group, ok := groups["cgroup2"]; ok && mounts["cgroup2"] != "" {
		c := &Cgroup{}
		err := c.make(filepath.Join(mounts["cgroup2"], group, name), []limitFile{{"pids.max", count(l.Processes), false}, {"memory.max", count(l.Memory), false}, {"memory.swap.max", swapMax, true}})
		if err == nil {
			return c, nil
		}
		tried = append(tried, "cgroup v2: "+err.Error())
	}
	c := &Cgroup{}
	mem := count(l.Memory)
	if mem == "max" {
		mem = "-1"
	}
	for _, ctl := range []struct {
		name   string
		limits []limitFile
	}{
		{"pids", []limitFile{{"pids.max", count(l.Processes), false}}},
		{"memory", []limitFile{{"memory.limit_in_bytes", mem, false}, {"memory.memsw.limit_in_bytes", mem, true}}},
	} {
		why := "no " + ctl.name + " hierarchy"
		if base, group := mounts[ctl.name], groups[ctl.name]; base != "" && group != "" {
			if err = c.make(filepath.Join(base, group, name), ctl.limits); err == nil {
				continue
			}
			why = err.Error()
		}
		c.Remove()
		return nil, fmt.Errorf("no cgroup with the pids and memory controllers (%s)", strings.Join(append(tried, "cgroup v1: "+why), "; "))
	}
	return c, nil
}

// limitFile is a limit as a control group file takes it; an optional one
// (swap) may be missing.
type limitFile struct {
	name, value string
	optional    bool
}

// count is a limit as cgroup files write it.
func count[T int | int64](n T) string {
	if n <= 0 {
		return "max"
	}
	return strconv.FormatInt(int64(n), 10)
}

func (c *Cgroup) make(dir string, limits []limitFile) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	c.dirs = append(c.dirs, dir)
	for _, l := range limits {
		err := os.WriteFile(filepath.Join(dir, l.name), []byte(l.value), 0)
		if err != nil && !(l.optional && errors.Is(err, os.ErrNotExist)) {
			c.Remove()
			return fmt.Errorf("set %s: %w", l.name, err)
		}
	}
	return nil
}

// Dirs are the groups the launcher joins.
func (c *Cgroup) Dirs() []string {
	if c == nil {
		return nil
	}
	return c.dirs
}

// Hit says which limit the command ran into, "" for none.
func (c *Cgroup) Hit() string {
	if c == nil {
		return ""
	}
	for _, d := range c.dirs {
		if counter(filepath.Join(d, "pids.events"), "max") > 0 {
			return "processes"
		}
		if counter(filepath.Join(d, "memory.events"), "oom_kill") > 0 || counter(filepath.Join(d, "memory.oom_control"), "oom_kill") > 0 {
			return "memory"
		}
	}
	return ""
}

// Remove removes the groups once the kernel has ended their processes.
func (c *Cgroup) Remove() {
	if c == nil {
		return
	}
	for _, d := range c.dirs {
		for range 1000 {
			if err := unix.Rmdir(d); !errors.Is(err, unix.EBUSY) {
				break
			}
			unix.Nanosleep(&unix.Timespec{Nsec: 1e6}, nil)
		}
	}
	c.dirs = nil
}

// counter reads "key N" from a control group's events file.
func counter(file, key string) int {
	data, _ := os.ReadFile(file)
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// cgroupMounts maps "cgroup2" and the v1 controllers to their mounts.
func cgroupMounts() (map[string]string, error) {
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read the mounts: %w", err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(info)) {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER
		before, after, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " - ")
		fields, tail := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(tail) < 3 || fields[3] != "/" {
			continue
		}
		switch tail[0] {
		case "cgroup2":
			out["cgroup2"] = fields[4]
		case "cgroup":
			for _, opt := range strings.Split(tail[2], ",") {
				if opt == "pids" || opt == "memory" {
					out[opt] = fields[4]
				}
			}
		}
	}
	return out, nil
}

// joinCgroups moves the launcher, and so all it starts, into the groups.
func joinCgroups(dirs []string) error {
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fmt.Errorf("enter the command's control group: %w", err)
		}
	}
	return nil
}

func setRlimits(l Limits) error {
	if l.Processes > 0 {
		// +1: the launcher itself is one of the user's processes here.
		n := uint64(l.Processes + 1)
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("limit the processes: %w", err)
		}
	}
	if l.Memory > 0 {
		n := uint64(l.Memory)
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("limit the memory: %w", err)
		}
	}
	return nil
}
