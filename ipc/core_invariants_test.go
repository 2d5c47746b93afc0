package ipc

import "fmt"

// checkInvariants checks the core's invariants (see core and coreStream), for the
// data-driven tests and the fuzz targets.
func (c *core) checkInvariants() error {
	if (c.phase == phaseFailed) != (c.err != nil) {
		return fmt.Errorf("phase %d with err %v", c.phase, c.err)
	}
	if c.phase == phaseFailed && (len(c.streams) != 0 || c.calls.pending != 0 || len(c.grants) != 0) {
		return fmt.Errorf("failed, yet %d streams, %d calls and %d grants remain", len(c.streams), c.calls.pending, len(c.grants))
	}
	if c.dataStreams < 0 {
		return fmt.Errorf("dataStreams %d", c.dataStreams)
	}
	if c.cfg.isClient && c.dataStreams > c.lim.DataStreams() {
		return fmt.Errorf("%d data streams over the limit %d", c.dataStreams, c.lim.DataStreams())
	}
	window := int64(c.lim.StreamWindow)
	for id, cs := range c.streams {
		var queued int64
		for _, m := range cs.inq[cs.inHead:] {
			queued += m.size
		}
		switch {
		case cs.id != id:
			return fmt.Errorf("stream %d filed under %d", cs.id, id)
		case cs.retired || cs.err != nil:
			return fmt.Errorf("stream %d is in the table though retired (%v) or failed (%v)", id, cs.retired, cs.err)
		case cs.ungranted < 0 || cs.queued != queued:
			return fmt.Errorf("stream %d: ungranted %d, queued %d counted %d", id, cs.ungranted, queued, cs.queued)
		case cs.recvAvail+cs.queued+cs.ungranted != window:
			return fmt.Errorf("stream %d: credit %d + queued %d + ungranted %d != window %d", id, cs.recvAvail, cs.queued, cs.ungranted, window)
		case cs.recvAvail < -int64(c.lim.MaxFrame) || cs.sendAvail < -int64(c.peer.MaxFrame):
			return fmt.Errorf("stream %d: credit overdrawn: receive %d, send %d", id, cs.recvAvail, cs.sendAvail)
		}
	}
	seen := map[*coreStream]bool{}
	for _, cs := range c.grants {
		if cs.grantAt.IsZero() {
			continue
		}
		if seen[cs] {
			return fmt.Errorf("stream %d has two delayed grants", cs.id)
		}
		seen[cs] = true
	}
	return nil
}
