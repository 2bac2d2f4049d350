package inbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkRenamedReply measures what a person waits for between saving a
// reply (a browser's download, an editor's save by rename, mv) and courier
// taking it: the time from the rename into inbox/ to Watch's callback,
// with a real watcher and the default settings. "events" reads close and
// move events (Linux); "poll" lists the folder and waits for the reply to
// settle, as on other systems and network folders. It reports the median
// and the slowest time in milliseconds.
func BenchmarkRenamedReply(b *testing.B) {
	for _, mode := range []struct {
		name string
		opts WatchOptions
	}{
		{"events", WatchOptions{}},
		{"poll", WatchOptions{Poll: true}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			dir := b.TempDir()
			got := make(chan string, 1)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Watch(ctx, dir, mode.opts, func(p string) error {
					os.Remove(p) // as courier moves it to processed/
					got <- filepath.Base(p)
					return nil
				})
			}()
			defer func() {
				cancel()
				<-done
			}()
			reply := []byte("Session: a1b2c3d4\nSequence: 1\n[RUN_COMMAND]\ngo test ./...\n[/RUN_COMMAND]\n")
			save := func(name string) time.Time {
				tmp := filepath.Join(dir, ".download.part")
				if err := os.WriteFile(tmp, reply, 0o644); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
					b.Fatal(err)
				}
				return start
			}
			// The first reply also waits for Watch to be set up.
			save("first.txt")
			if name := <-got; name != "first.txt" {
				b.Fatalf("delivered %s", name)
			}
			var lat []time.Duration
			i := 0
			for b.Loop() {
				name := fmt.Sprintf("reply-%d.txt", i)
				start := save(name)
				if d := <-got; d != name {
					b.Fatalf("delivered %s, want %s", d, name)
				}
				lat = append(lat, time.Since(start))
				i++
			}
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		})
	}
}
