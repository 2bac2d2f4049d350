package inbox

import "testing"

func TestIsReply(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"reply.txt", true},
		{"reply.md", true},
		{"Reply.TXT", true},
		{"answer.Md", true},
		{"2024-05-01 chat answer.txt", true},
		{"dir/sub/reply.txt", true},
		{"reply", true},
		{"reply.html", true},
		{"answer.markdown", true},
		{"reply.txt.tmp", false},
		{"reply.txt~", false},
		{"reply.txt.swp", false},
		{"reply.txt.swx", false},
		{".reply.txt.swp", false},
		{"reply.txt.part", false},
		{"reply.txt.crdownload", false},
		{"Unconfirmed 123.crdownload", false},
		{"reply.txt.download", false},
		{"reply.txt.partial", false},
		{"#reply.txt#", false},
		{".#reply.txt", false},
		{".~lock.reply.txt#", false},
		{"~$reply.txt", false},
		{".hidden.txt", false},
		{".txt", false},
		{"", false},
		{"/", false},
		{"processed", true}, // a name like any other; folders are never listed
	}
	for _, tt := range tests {
		if got := IsReply(tt.name); got != tt.want {
			t.Errorf("IsReply(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
