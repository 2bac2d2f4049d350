package serve_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// BenchmarkPage measures the page in headless Chromium ('make bench' rows):
// first_load reports ms-load, the median time the page of a session takes
// to load as the browser times it (from the navigation's start to the
// end of its load event), its scripts and style fetched with it (the
// cache off); results_after_turn reports ms-after-turn, from the moment
// the turn's end is told on /api/events to the moment its results show on
// the page.
func BenchmarkPage(b *testing.B) {
	s := start(b, settings(b.TempDir()), nil)
	id := s.session("bench")
	tb := openTab(b, s)
	tb.step("open", chromedp.Navigate(s.base+"/?token="+s.token), chromedp.WaitVisible(chromedp.CSS("#new")),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
			return err
		}))
	b.Run("first_load", func(b *testing.B) {
		var loads []float64
		for b.Loop() {
			if err := chromedp.Do(tb.ctx, chromedp.Navigate(s.base+"/s/"+id)); err != nil {
				b.Fatal(err)
			}
			loads = append(loads, eval[float64](tb, "performance.getEntriesByType('navigation')[0].loadEventEnd"))
		}
		slices.Sort(loads)
		b.ReportMetric(loads[len(loads)/2], "ms-load")
	})
	b.Run("results_after_turn", func(b *testing.B) {
		tb.step("watch", chromedp.Navigate(s.base+"/s/"+id), chromedp.WaitVisible(chromedp.CSS("#status")))
		// The page notes when #status first shows what it waits for.
		eval[bool](tb, `new MutationObserver(() => {
			if (window.want && !window.shownAt && document.querySelector('#status').textContent.includes(window.want)) window.shownAt = Date.now();
		}).observe(document.body, {subtree: true, childList: true, characterData: true}), true`)
		events := s.stream()
		var after []float64
		n := 0
		for b.Loop() {
			n++
			mark := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), n)
			eval[bool](tb, fmt.Sprintf("window.want = %q; window.shownAt = 0; true", mark))
			posted := make(chan struct{})
			go func() {
				defer close(posted)
				read(b, s.text("/api/sessions/"+id+"/reply", "[RUN_COMMAND]\necho "+mark+"\n[/RUN_COMMAND]\n"))
			}()
			await(b, events, "turnEnded", `"session":"`+id+`"`)
			ended := time.Now()
			<-posted
			shown := int64(0)
			for deadline := time.Now().Add(5 * time.Second); shown == 0 && time.Now().Before(deadline); {
				shown = eval[int64](tb, "window.shownAt || 0")
			}
			if shown == 0 {
				b.Fatalf("the results of %s did not show within 5 s", mark)
			}
			after = append(after, float64(max(0, time.UnixMilli(shown).Sub(ended.Truncate(time.Millisecond)).Milliseconds())))
		}
		slices.Sort(after)
		b.ReportMetric(after[len(after)/2], "ms-after-turn")
	})
}
