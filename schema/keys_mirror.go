package schema

// MirrorCursors is the hash where `flapjack receiver mirror` keeps, for one source Redis, how
// many events of each of its archive lists it has queued here: field = the archive key
// (events_archive:YYYYMMDDHH), value = the events taken from that list's oldest end (Flapjack
// 1.x archives with BRPOPLPUSH, so a list grows at its head). Written in the same transaction
// as the events it counts, so a restarted mirror neither repeats nor skips any. source names the
// source Redis without its password (redis://host:port/db).
func (k Keys) MirrorCursors(source string) string { return k.key("mirror_cursors", source) }
