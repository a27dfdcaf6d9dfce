// Package pool runs jobs on a fixed number of goroutines and collects
// their results in submission order.
package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Job is one unit of work; it must return promptly when ctx is done.
type Job func(ctx context.Context) (string, error)

// Result pairs a job's output with its index in the submitted slice.
type Result struct {
	Index    int
	Value    string
	Err      error
	Duration time.Duration
}

// ErrNoWorkers is returned when Run is called with workers < 1.
var ErrNoWorkers = errors.New("pool: need at least one worker")

// Run executes jobs on `workers` goroutines and returns every result,
// ordered like jobs. The first failing job cancels the others.
func Run(ctx context.Context, workers int, jobs []Job) ([]Result, error) {
	if workers < 1 {
		return nil, ErrNoWorkers
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	indices := make(chan int)
	results := make([]Result, len(jobs))
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error

	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range indices {
				start := time.Now()
				v, err := jobs[i](ctx)
				results[i] = Result{Index: i, Value: v, Err: err, Duration: time.Since(start)}
				if err != nil {
					once.Do(func() {
						firstErr = fmt.Errorf("job %d: %w", i, err)
						cancel()
					})
				}
			}
		}()
	}

feed:
	for i := range jobs {
		select {
		case indices <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(indices)
	wg.Wait()
	return results, firstErr
}
