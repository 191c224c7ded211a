package acorn

// Two processes on one file: the test binary runs itself again as a child
// (TestHelperProcess, the job named by ACORN_TEST_CHILD), and the two order
// their steps through the child's stdin and stdout, never by sleeping.  The
// child writes one line per step, starting with "@"; "@error ..." ends it.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	tChildJob     = "ACORN_TEST_CHILD"
	tChildPath    = "ACORN_TEST_PATH"
	tChildJournal = "ACORN_TEST_JOURNAL"
	tChildOp      = "ACORN_TEST_OP"
)

// tJournals are the journal modes the process tests run in.
var tJournals = []string{"wal", "delete"}

// tOpenJournal opens the cache of path in a journal mode, with the default
// busy timeout.
func tOpenJournal(path, journal string) (*Cache, error) {
	o := tPathOpts(path)
	o.SetJournalMode = journal
	return NewCache(o)
}

func TestHelperProcess(t *testing.T) {
	job := os.Getenv(tChildJob)
	if job == "" {
		t.Skip("the child of the process tests: runs only when one of them starts it")
	}
	err := tChildMain(job, os.Getenv(tChildPath), os.Getenv(tChildJournal), os.Getenv(tChildOp))
	if err != nil {
		fmt.Printf("@error %s: %v\n", job, strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
	os.Exit(0)
}

// tChild is a child process seen from the test.
type tChild struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr bytes.Buffer
	done   bool
}

func tStartChild(t *testing.T, job, path, journal, op string) *tChild {
	t.Helper()
	ch := &tChild{t: t}
	ch.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	ch.cmd.Env = append(os.Environ(), tChildJob+"="+job, tChildPath+"="+path, tChildJournal+"="+journal, tChildOp+"="+op)
	ch.cmd.Stderr = &ch.stderr
	var err error
	if ch.in, err = ch.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := ch.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ch.out = bufio.NewScanner(out)
	if err := ch.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !ch.done {
			ch.cmd.Process.Kill()
			ch.cmd.Wait()
		}
	})
	return ch
}

func (ch *tChild) send(line string) {
	ch.t.Helper()
	if _, err := io.WriteString(ch.in, line+"\n"); err != nil {
		ch.t.Fatalf("to the child: %v", err)
	}
}

// line is the child's next "@" line, or ok false at the end of its output.
func (ch *tChild) line() (string, bool) {
	for ch.out.Scan() {
		if s := ch.out.Text(); strings.HasPrefix(s, "@") {
			return s, true
		}
	}
	return "", false
}

// expect reads the child's next line, which must start with prefix, and
// returns the rest of it.
func (ch *tChild) expect(prefix string) string {
	ch.t.Helper()
	s, ok := ch.line()
	if !ok {
		ch.finish()
		ch.t.Fatalf("the child ended while %q was expected; its stderr:\n%s", prefix, ch.stderr.String())
	}
	if !strings.HasPrefix(s, prefix) {
		ch.t.Fatalf("the child said %q; expected %q", s, prefix)
	}
	return strings.TrimPrefix(s, prefix)
}

// finish closes the child's stdin and waits for it.
func (ch *tChild) finish() error {
	ch.in.Close()
	for ch.out.Scan() {
	}
	ch.done = true
	return ch.cmd.Wait()
}

// wait waits for a child that must end well.
func (ch *tChild) wait() {
	ch.t.Helper()
	if err := ch.finish(); err != nil {
		ch.t.Fatalf("the child: %v; its stderr:\n%s", err, ch.stderr.String())
	}
}

// tChildMain runs a child's job.
func tChildMain(job, path, journal, op string) error {
	c, err := tOpenJournal(path, journal)
	if err != nil {
		return err
	}
	defer c.Close()
	in := bufio.NewScanner(os.Stdin)
	next := func(want string) error {
		if !in.Scan() {
			return fmt.Errorf("stdin ended before %q", want)
		}
		if in.Text() != want {
			return fmt.Errorf("read %q, expected %q", in.Text(), want)
		}
		return nil
	}
	fmt.Println("@ready")
	switch job {
	case "wait":
		return tChildWait(c, path, journal, op, next)
	case "pieces":
		if err := next("go"); err != nil {
			return err
		}
		return tChildPieces(c)
	case "writer":
		// Killed by the parent; ends on its own only if the parent is gone.
		go func() {
			io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}()
		return tChildWriter(c)
	}
	return fmt.Errorf("unknown job %q", job)
}

// tChildWait: while the parent holds the write lock, a writer that does
// not wait fails, then the child's own write (op: put, tx or immediate)
// waits for the parent's commit and goes on.
func tChildWait(c *Cache, path, journal, op string, next func(string) error) error {
	if err := next("go"); err != nil {
		return err
	}
	o := tPathOpts(path)
	o.SetJournalMode = journal
	o.BusyTimeout = time.Millisecond
	probe, err := NewCache(o)
	if err != nil {
		return fmt.Errorf("the probe's NewCache: %w", err)
	}
	err = probe.Put("probe", []byte("x"))
	probe.Close()
	if err == nil {
		return errors.New("a write with a busy timeout of 1 ms went through while the parent holds the write lock")
	}
	fmt.Printf("@locked %v\n", err)
	var seen []byte
	done := make(chan error, 1)
	go func() { done <- tChildWrite(c, op, &seen) }()
	// The order is certain: the parent commits only once this write is
	// inside sqlite3_step, where the lock the parent holds stops it.
	frame := "acorn.(*Cache).put("
	if op == "immediate" {
		frame = "acorn.(*Cache).begin("
	}
	for !tInStep(frame) {
		select {
		case err := <-done:
			return fmt.Errorf("the write ended (%v) while the parent held the write lock", err)
		default:
			runtime.Gosched()
		}
	}
	fmt.Println("@inside")
	if err := <-done; err != nil {
		return err
	}
	fmt.Printf("@done %s\n", seen)
	return nil
}

// tChildWrite is the child's write of TestProcessWriterWaits, then its read
// of the parent's key.
func tChildWrite(c *Cache, op string, seen *[]byte) error {
	value := []byte("from the child")
	switch op {
	case "put":
		if err := c.Put("child", value); err != nil {
			return err
		}
		var err error
		*seen, err = c.ReadAll("parent", nil)
		return err
	case "tx", "immediate":
		run := c.Tx
		if op == "immediate" {
			run = c.TxImmediate
		}
		return run(func(tx *Tx) error {
			if err := tx.Put("child", value); err != nil {
				return err
			}
			var err error
			*seen, err = tx.ReadAll("parent", nil)
			return err
		})
	}
	return fmt.Errorf("unknown op %q", op)
}

// tInStep tells whether a goroutine of this process is in mattn's call of
// sqlite3_step under a frame of the package's (a function name and "(").
func tInStep(frame string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, frame) && strings.Contains(g, "go-sqlite3._Cfunc__sqlite3_step") {
			return true
		}
	}
	return false
}

const (
	tPieces    = 32
	tPieceSize = 16 << 10
	tPieceKey  = "torrent/piece"
)

// tPiece is the content of piece i.
func tPiece(i int) []byte { return tValue(fmt.Sprint("piece ", i), tPieceSize) }

// tChildPieces writes the pieces of tPieceKey out of order, each in a
// transaction of one of four kinds, and says "@wrote i" after each commit.
func tChildPieces(c *Cache) error {
	for j := 0; j < tPieces; j++ {
		i := j * 7 % tPieces
		off := int64(i * tPieceSize)
		piece := tPiece(i)
		write := func(w io.WriterAt) error {
			n, err := w.WriteAt(piece, off)
			if err == nil && n != len(piece) {
				err = fmt.Errorf("WriteAt wrote %d of %d bytes", n, len(piece))
			}
			return err
		}
		inTx := func(tx *Tx) error {
			pb, err := tx.OpenPinned(tPieceKey)
			if err != nil {
				return err
			}
			defer pb.Close()
			return write(pb)
		}
		var err error
		switch j % 4 {
		case 0:
			err = write(c.NewBlobRef(tPieceKey))
		case 1:
			err = c.Tx(inTx)
		case 2:
			err = c.TxImmediate(inTx)
		case 3:
			var cb CachePinnedBlob
			if cb, err = c.OpenPinned(tPieceKey); err == nil {
				err = joinErr(write(cb), cb.Close())
			}
		}
		if err != nil {
			return fmt.Errorf("piece %d: %w", i, err)
		}
		fmt.Printf("@wrote %d\n", i)
	}
	fmt.Println("@end")
	return nil
}

// tWriterHash is the info hash of the writer's keys: NUL and 0xFF bytes in it.
var tWriterHash = [20]byte{0, 0xFF, 1, 0, 2, 0xFE, 3, 0, 0, 4, 5, 6, 0xFF, 0xFF, 7, 0, 8, 9, 10, 0}

// tWriterEntry is the key and value of the writer's step i.
func tWriterEntry(i int) (string, []byte) {
	k := tKey(tWriterHash, uint32(i))
	return k, tValue(k, 1+i*37%3000)
}

// tChildWriter sets a new key at each step, in one of four ways, and says
// "@k i" once the step's commit has returned, until it is killed.
func tChildWriter(c *Cache) error {
	for i := 0; i < 1<<20; i++ {
		k, v := tWriterEntry(i)
		var err error
		switch i % 4 {
		case 0:
			err = c.Put(k, v)
		case 1:
			err = c.TxImmediate(func(tx *Tx) error {
				if err := tx.Put(k, []byte("replaced in the same transaction")); err != nil {
					return err
				}
				return tx.Put(k, v)
			})
		case 2:
			_, err = c.BlobWithLength(k, int64(len(v))).WriteAt(v, 0)
		case 3:
			var cb CachePinnedBlob
			if cb, err = c.Create(k, CreateOpts{Length: int64(len(v))}); err == nil {
				half := len(v) / 2
				_, err1 := cb.WriteAt(v[half:], int64(half))
				_, err2 := cb.WriteAt(v[:half], 0)
				err = joinErr(joinErr(err1, err2), cb.Close())
			}
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		fmt.Printf("@k %d\n", i)
	}
	return errors.New("never killed")
}

// TestProcessWriterWaits: the parent holds a write transaction; the child's
// Put (or Tx, or TxImmediate) waits for it within the default busy timeout
// instead of failing, and its transaction sees the parent's commit.
func TestProcessWriterWaits(t *testing.T) {
	for _, journal := range tJournals {
		for _, op := range []string{"put", "tx", "immediate"} {
			t.Run(journal+"/"+op, func(t *testing.T) {
				path := tFile(t)
				c, err := tOpenJournal(path, journal)
				tNoErr(t, err, "NewCache")
				defer c.Close()
				tNoErr(t, c.Put("before", []byte("x")), "Put")
				ch := tStartChild(t, "wait", path, journal, op)
				ch.expect("@ready")
				err = c.TxImmediate(func(tx *Tx) error {
					if err := tx.Put("parent", []byte("p")); err != nil {
						return err
					}
					ch.send("go")
					if msg := ch.expect("@locked "); !strings.Contains(msg, "database is locked") {
						t.Errorf("the child's write without a wait failed with %q", msg)
					}
					ch.expect("@inside")
					return nil // commit: the child's write goes on
				})
				tNoErr(t, err, "TxImmediate")
				seen := ch.expect("@done ")
				if seen != "p" {
					t.Fatalf("the child read %q of the parent's key after its write, want %q", seen, "p")
				}
				ch.wait()
				tWantValue(t, c, "child", []byte("from the child"))
				tWantValue(t, c, "parent", []byte("p"))
				_, err = c.ReadAll("probe", nil)
				tNotFound(t, err, "the refused write of the child's probe")
				tIntegrity(t, c)
			})
		}
	}
}

// TestProcessPieces: the child writes the pieces of one value with WriteAt
// while the parent reads each piece once told it is written: a piece reads
// whole or not at all.  In WAL mode a snapshot the parent opened first reads
// zeros throughout, and the -wal file stays small.
func TestProcessPieces(t *testing.T) {
	for _, journal := range tJournals {
		t.Run(journal, func(t *testing.T) {
			path := tFile(t)
			c, err := tOpenJournal(path, journal)
			tNoErr(t, err, "NewCache")
			defer c.Close()
			size := int64(tPieces * tPieceSize)
			tNoErr(t, c.Put(tPieceKey, make([]byte, size)), "Put")
			var snap CachePinnedBlob
			if journal == "wal" {
				// A rollback journal's writer waits for every reader to
				// end: there only WAL keeps a snapshot while others write.
				snap, err = c.OpenPinnedReadOnly(tPieceKey)
				tNoErr(t, err, "OpenPinnedReadOnly")
			}
			ch := tStartChild(t, "pieces", path, journal, "")
			ch.expect("@ready")
			ch.send("go")
			blob := c.NewBlobRef(tPieceKey)
			written := map[int]bool{}
			zero := make([]byte, tPieceSize)
			b := make([]byte, tPieceSize)
			for j := 0; j < tPieces; j++ {
				i, err := strconv.Atoi(ch.expect("@wrote "))
				tNoErr(t, err, "the child's piece number")
				written[i] = true
				if n, err := blob.ReadAt(b, int64(i*tPieceSize)); n != tPieceSize || err != nil || !bytes.Equal(b, tPiece(i)) {
					t.Fatalf("piece %d, written: ReadAt = %d, %v, right %v", i, n, err, bytes.Equal(b, tPiece(i)))
				}
				// The next piece the child writes, maybe being written now.
				o := (j + 1) * 7 % tPieces
				if _, err := blob.ReadAt(b, int64(o*tPieceSize)); err != nil {
					t.Fatalf("piece %d: ReadAt: %v", o, err)
				}
				if !bytes.Equal(b, tPiece(o)) && (written[o] || !bytes.Equal(b, zero)) {
					t.Fatalf("piece %d (written %v) is torn", o, written[o])
				}
			}
			ch.expect("@end")
			ch.wait()
			want := make([]byte, 0, size)
			for i := 0; i < tPieces; i++ {
				want = append(want, tPiece(i)...)
			}
			if journal == "wal" {
				got, err := io.ReadAll(io.NewSectionReader(snap, 0, size))
				tNoErr(t, err, "reading the snapshot")
				if !bytes.Equal(got, make([]byte, size)) {
					t.Fatalf("the snapshot taken before the child wrote sees its pieces")
				}
				tNoErr(t, snap.Close(), "Close")
				st, err := os.Stat(path + "-wal")
				tNoErr(t, err, "stat -wal")
				t.Logf("-wal: %d bytes after %d pieces of %d KiB written by another process", st.Size(), tPieces, tPieceSize>>10)
				if st.Size() > 4<<20 {
					t.Fatalf("the -wal file holds %d bytes after %d bytes were written in pieces", st.Size(), size)
				}
			}
			tWantValue(t, c, tPieceKey, want)
			tIntegrity(t, c)
		})
	}
}

// TestProcessKilled: a writer killed with SIGKILL in the middle of its
// writes leaves a table that passes integrity_check, with every key it
// reported committed, value for value, and nothing else but its last one.
func TestProcessKilled(t *testing.T) {
	const reported = 150
	for _, journal := range tJournals {
		t.Run(journal, func(t *testing.T) {
			path := tFile(t)
			c, err := tOpenJournal(path, journal)
			tNoErr(t, err, "NewCache")
			tNoErr(t, c.Close(), "Close") // the child writes alone
			ch := tStartChild(t, "writer", path, journal, "")
			ch.expect("@ready")
			last := -1
			for last < reported-1 {
				i, err := strconv.Atoi(ch.expect("@k "))
				if err != nil || i != last+1 {
					t.Fatalf("the child reported step %d (%v) after %d", i, err, last)
				}
				last = i
			}
			tNoErr(t, ch.cmd.Process.Kill(), "kill -9")
			// The lines written before the kill are still in the pipe.
			for {
				s, ok := ch.line()
				if !ok {
					break
				}
				i, err := strconv.Atoi(strings.TrimPrefix(s, "@k "))
				if err != nil || i != last+1 {
					t.Fatalf("the child said %q after step %d", s, last)
				}
				last = i
			}
			err = ch.finish()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != -1 {
				t.Fatalf("the child ended with %v, not by the kill; its stderr:\n%s", err, ch.stderr.String())
			}
			if journal == "wal" {
				if _, err := os.Stat(path + "-wal"); err != nil {
					t.Logf("no -wal left by the killed writer: %v", err)
				}
			}

			c, err = tOpenJournal(path, journal)
			tNoErr(t, err, "NewCache after the kill")
			defer c.Close()
			tIntegrity(t, c)
			for i := 0; i <= last; i++ {
				k, v := tWriterEntry(i)
				tWantValue(t, c, k, v)
			}
			// Nothing else, but the step the kill may have cut after its
			// commit and before its line.
			rows, err := c.DB().Query(`SELECT key FROM cache`)
			tNoErr(t, err, "SELECT key")
			defer rows.Close()
			n := 0
			for rows.Next() {
				var k string
				tNoErr(t, rows.Scan(&k), "Scan")
				n++
				if len(k) != 24 || k[:20] != string(tWriterHash[:]) {
					t.Fatalf("a key the writer never set: %q", k)
				}
				i := int(binary.BigEndian.Uint32([]byte(k[20:])))
				if i > last+1 {
					t.Fatalf("step %d is in the table, but the writer reported only up to %d", i, last)
				}
			}
			tNoErr(t, rows.Err(), "rows")
			if n != last+1 && n != last+2 {
				t.Fatalf("%d entries after %d reported steps", n, last+1)
			}
			if n == last+2 {
				k, v := tWriterEntry(last + 1)
				tWantValue(t, c, k, v)
			}
			t.Logf("%s: killed after step %d; %d entries", journal, last, n)
			// The file takes writes again.
			tNoErr(t, c.Put("after", []byte("kill")), "Put after the kill")
			tIntegrity(t, c)
		})
	}
}
