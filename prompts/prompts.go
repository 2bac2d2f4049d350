// Package prompts holds the text courier puts in front of the LLM. It lives
// in files so that it reads and diffs as prose, and is embedded so that the
// binary is self-contained.
package prompts

import _ "embed"

// Protocol is the PROTOCOL section of every outbox: the commands with an
// example each, the path rules and the behaviour rules. It is the same in
// every outbox.
//
//go:embed protocol.txt
var Protocol string

// ProtocolJSON is the PROTOCOL section of a request in the Agent Spaces
// JSON protocol: the operations message, the six operations, the limits,
// how events come back, and how a session ends.
//
//go:embed protocol_json.txt
var ProtocolJSON string

// Reminder stands for the protocol in the requests after the first of a
// chat, when the person chose to paste the full text only once.
//
//go:embed reminder.txt
var Reminder string

// ReminderJSON is Reminder for the Agent Spaces JSON protocol.
//
//go:embed reminder_json.txt
var ReminderJSON string
