package benchcmp

import "testing"

func TestParseGoBenchKeepsTheBest(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkParse/ordinary/1MB-2   	       3	   9164327 ns/op	 114.37 MB/s	 2280344 B/op	    7829 allocs/op
BenchmarkParse/ordinary/1MB-2   	       3	   4164327 ns/op	 251.80 MB/s	 2280000 B/op	    7829 allocs/op
BenchmarkReadReply/lf-2    	       2	 227383470 ns/op	         4.391 reply-x	92088368 B/op	      44 allocs/op
PASS
`)
	r := parseGoBench(out)
	if v := r["BenchmarkParse/ordinary/1MB"]["ns/op"]; v != 4164327 {
		t.Errorf("ns/op %v", v)
	}
	if v := r["BenchmarkReadReply/lf"]["reply-x"]; v != 4.391 {
		t.Errorf("reply-x %v", v)
	}
	if len(r) != 2 {
		t.Errorf("%d benchmarks read, want 2: %v", len(r), r)
	}
}
