package textdist

import (
	"strings"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"CREATE_FILE", "CREATE_FILE", 0},
		{"CREAT_FILE", "CREATE_FILE", 1},
		{"comand_timeout", "command_timeout", 1},
		{"WRITE_FILE", "READ_FILE", 4},
		{"kitten", "sitting", 3},
		{strings.Repeat("a", 40), strings.Repeat("a", 39) + "b", 1}, // longer than the stack buffer
	}
	for _, tt := range tests {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Levenshtein(tt.b, tt.a); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func BenchmarkLevenshteinName(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Levenshtein("CREAT_FILE", "CREATE_FILE")
	}
}

func TestNearest(t *testing.T) {
	known := []string{"claude", "codex", "gemini", "command", "max_turns", "max_restarts"}
	tests := []struct{ word, want string }{
		{"claud", "claude"},
		{"comand", "command"},
		{"max_turn", "max_turns"},
		{"codec", "codex"},
		{"chatgpt", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := Nearest(tt.word, known); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
