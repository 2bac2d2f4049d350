// Package policy decides whether courier may run a shell command on its
// own (allow), only with the person's approval (ask), or not at all (deny).
//
// A command is parsed as shell (bash, or POSIX sh when bash will not
// parse it) and every program it would start is found: in pipelines and
// lists, subshells and groups, command and process substitutions (also
// inside arguments, double quotes, assignments, redirections and
// here-documents), function bodies, if/while/for/case bodies, behind
// wrappers (env, nohup, timeout, nice, ionice, stdbuf, setsid, chroot,
// command, exec, builtin, time, xargs, busybox, watch, find -exec and the
// denied sudo-like ones), and in code that is parsed again: sh -c and
// bash -c strings, here-documents fed to a shell, eval arguments, alias
// values, trap actions, env -S strings and watch commands, up to a depth
// limit. Quotes and escapes are removed before a program name is judged
// (`s"u"do` and `\sudo` are sudo) and a path is judged by its base name
// (/usr/bin/sudo is sudo). Words that are only arguments, as in
// `echo sudo`, are not programs.
//
// # Rules
//
// A rule is a line of words, optionally followed by "#" and a description
// that reasons show:
//
//	program [option|operand ...] [# description]
//
// The program is a name or a shell pattern (*, ?, [...]) matched against
// the program's base name, ignoring case as case-insensitive file systems
// do: "sudo", "mkfs*". With a "/" it is matched against the whole path as
// written, cleaned: "./deploy.sh".
//
// An option word starts with "-". A single letter (-r) matches that
// option alone or in a cluster (-rf, -fr); a longer one (-delete,
// --force) matches that whole argument, also with "=value", and a --name
// also matches the shortened forms GNU programs accept (--rec). Options
// match anywhere before a "--" argument.
//
// Other words are shell patterns for operands, the arguments that are not
// options, matched in order against the first of them: "git push"
// matches `git push`, `git push -f origin` and `git -C dir push`.
//
// A rule that is only "@" and a name sets the decision for a built-in
// check by the list it is in:
//
//	@dynamic       a program name or shell code computed at run time
//	               ($CMD x, $(which rm) x, bash -c "$s", code from a pipe)
//	@download      code downloaded from the network and run
//	               (curl URL | sh, bash <(wget -O- URL), bash -c "$(curl URL)")
//	@device-write  a write to a device (> /dev/sda, dd of=/dev/sdb) or to a
//	               kernel file under /proc or /sys
//	@device        any other use of a device such as a disk, and bash's
//	               /dev/tcp and /dev/udp network redirections
//	@unparseable   command text that cannot be parsed as shell
//	@git-write     a git command that writes the repository's .git (add,
//	               commit, checkout, config, fetch...; not status, diff,
//	               log and the other reading forms), which courier keeps
//	               read-only for commands
//	@runs-code     a program told to run code the policy cannot read or
//	               that starts programs: git -c settings that name
//	               programs (alias.*, core.fsmonitor...), awk system() and
//	               pipes, sed's e and w, tar --to-command and
//	               --checkpoint-action, ssh ProxyCommand and -F, inline
//	               python, perl, ruby, node, php or lua code that deletes
//	               files or starts programs
//
// @download also covers a file saved by curl or wget and then run in the
// same command (curl -o a.sh URL && sh a.sh). The commands inside git
// aliases, ssh ProxyCommand, tar --to-command, rsync -e, git submodule
// foreach and git rebase --exec are read like any other, so a denied
// program in them is denied. When one of the person's own rules matches a
// program, it decides for that program instead of @git-write and
// @runs-code, and approving "all like it" covers the one git subcommand
// or program that was asked about. An approval "for all like it" also
// keeps the command's shape (Verdict.Shape): a later command that adds
// variable assignments, wrappers, git options or redirections is asked
// about.
//
// /dev/null, /dev/zero, /dev/stdout, /dev/stderr, /dev/tty, /dev/fd/N and
// the like are not devices for these checks.
//
// # Decisions
//
// Each program, and each thing a check notices, gets a decision: the
// config's rules are consulted first and, when none of them matches, the
// defaults. Within one set of rules the most severe matching rule wins
// (deny over ask over allow), so a config with Deny "git" and Allow
// "git status" denies git status too. Nothing matching means allow. The
// command's decision is the most severe of all of them, and its reason
// lists every program and rule behind it.
//
// Where a command leaves doubt, deny and ask rules match and allow rules
// do not: a computed argument ($f, *.log, xargs input) may be any option
// or operand, and a word after an option may be that option's value or an
// operand. So `rm "$f"` needs approval under the rule "rm -r" (write
// `rm -- "$f"` to say it is a file), and an allow rule "git push" does not
// cover `git --no-pager push`. A program path with an unquoted expansion,
// like $HOME/bin/tool, needs approval as a computed name, since the
// expansion may split into several words; "$HOME"/bin/tool does not.
//
// Whole-tree git discards (git checkout ., git restore ., git reset
// --hard) say so in their reason beside @git-write. mount and umount ask
// rather than being denied, because listing mounts is common and
// harmless.
//
// The policy judges names and arguments; it cannot see into the programs
// a command runs: scripts and Makefiles the reply may have written (make
// asks for that reason; sh script.sh, npm test, go test and python3 x.py
// do not), interpreters' files, code built at run time, nor a program
// copied or linked under another name. It is one layer of courier's
// safety; the sandbox the shell runs in, and undo, are what contain the
// rest.
package policy
