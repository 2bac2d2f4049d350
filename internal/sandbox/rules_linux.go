package sandbox

import "github.com/landlock-lsm/go-landlock/landlock"

// devices are the device files ordinary commands write to or control.
// The ioctl right (Landlock ABI 5) keeps terminal operations (tcgetattr,
// window size) working on them.
var devices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx",
}

// landlockConfig says which operations Landlock handles, i.e. denies unless
// a rule allows them: every filesystem right go-landlock knows, TCP/UDP when
// the network is cut, and always the IPC scopes, so the command can neither
// signal processes outside its sandbox (courier, the person's editor) nor
// reach services on abstract UNIX sockets. BestEffort later narrows this to
// what the kernel supports.
func landlockConfig(opts Options) landlock.Config {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		Scoped:          landlock.V11.Scoped,
	}
	if opts.NoNetwork {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	}
	return cfg
}

// rules grants reading and executing everywhere, full access to the
// writable and temporary folders, and use of the common devices. With no
// network rule, a handled network (NoNetwork) denies all TCP bind/connect.
func rules(opts Options, abi int) []landlock.Rule {
	writable := landlock.RWDirs(opts.Writable...).WithResolveUnix()
	temp := landlock.RWDirs(TempDirs()...).WithResolveUnix().IgnoreIfMissing()
	// Moving or linking a file between folders needs "refer" (ABI 2). On an
	// ABI 1 kernel asking for it would make BestEffort drop Landlock
	// entirely, while ABI 1 always forbids such moves anyway.
	if abi >= 2 {
		writable = writable.WithRefer()
		temp = temp.WithRefer()
	}
	return []landlock.Rule{
		landlock.RODirs("/"),
		writable,
		temp,
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
}
