package acorn

// What acorn has that squirrel lacks, in the same style: stats, the eviction
// feed, tags, expiry.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Stats is one row of cache_stats.  Under fifo, Hits and Misses are -1
// (not counted).
type Stats struct {
	Capacity, Entries, Bytes, Hits, Misses, Evictions, Expired int64
}

// Stats returns the table's counters, the calling connection's buffered
// hits and misses included.
func (c *Cache) Stats() (Stats, error) {
	var s Stats
	var hits, misses sql.NullInt64
	r, err := c.pool()
	if err != nil {
		return s, err
	}
	err = r.queryRow("SELECT capacity, entries, bytes, hits, misses, evictions, expired FROM cache_stats(?)", c.table).
		Scan(&s.Capacity, &s.Entries, &s.Bytes, &hits, &misses, &s.Evictions, &s.Expired)
	if err != nil {
		return s, fmt.Errorf("acorn: Stats: %w", err)
	}
	s.Hits, s.Misses = -1, -1
	if hits.Valid {
		s.Hits, s.Misses = hits.Int64, misses.Int64
	}
	return s, nil
}

// Eviction is one row of the eviction feed.
type Eviction struct {
	Seq    int64     // counts up from 1, never given twice
	Key    string    // the removed entry's key
	Size   int64     // what it counted for in Stats.Bytes
	Reason string    // "capacity", "entries" or "expired"
	At     time.Time // when it was removed
}

// Evictions returns the feed's rows after seq (0: all it keeps), oldest
// first.  Empty when the table has no feed (NewCacheOpts.Feed).
func (c *Cache) Evictions(after int64) ([]Eviction, error) {
	r, err := c.pool()
	if err != nil {
		return nil, err
	}
	rows, err := r.query("SELECT seq, key, size, reason, at FROM cache_evictions(?) WHERE seq > ?", c.table, after)
	if err != nil {
		return nil, fmt.Errorf("acorn: Evictions: %w", err)
	}
	defer rows.Close()
	var out []Eviction
	for rows.Next() {
		var e Eviction
		var at int64
		if err := rows.Scan(&e.Seq, &e.Key, &e.Size, &e.Reason, &at); err != nil {
			return nil, fmt.Errorf("acorn: Evictions: %w", err)
		}
		e.At = time.UnixMilli(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("acorn: Evictions: %w", err)
	}
	return out, nil
}

// DeleteTag removes every entry tagged tag and returns how many.
func (c *Cache) DeleteTag(tag string) (int64, error) {
	r, err := c.pool()
	if err != nil {
		return 0, err
	}
	res, err := r.exec(c.sql.delTag, tag)
	if err != nil {
		return 0, fmt.Errorf("acorn: DeleteTag %q: %w", tag, err)
	}
	return res.RowsAffected()
}

// Purge removes the expired entries now (acorn also removes them as it
// meets them).
func (c *Cache) Purge() error {
	if c.closed.Load() {
		return ErrClosed
	}
	if err := c.command("purge", nil); err != nil {
		return fmt.Errorf("acorn: Purge: %w", err)
	}
	return nil
}

// Flush writes the uses (recency, hits and misses) that the Cache's
// connections hold in memory, so that LastUsed, Stats and other processes
// see them.  A connection also writes its buffer when it fills
// (recency_buffer), at its next write and when it closes; one inside a Tx
// or pinned blob is not reached here.
func (c *Cache) Flush() error {
	if c.closed.Load() {
		return ErrClosed
	}
	ctx := context.Background()
	n := c.db.Stats().OpenConnections
	var conns []*sql.Conn
	defer func() {
		for _, k := range conns {
			k.Close()
		}
	}()
	// Holding n connections at once takes each idle one of the pool.
	for i := 0; i < n; i++ {
		k, err := c.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("acorn: Flush: %w", err)
		}
		conns = append(conns, k)
		if _, err := k.ExecContext(ctx, c.sql.command, "flush", nil); err != nil {
			return fmt.Errorf("acorn: Flush: %w", err)
		}
	}
	return nil
}
