//! On-disk durability for the store: a snapshot file plus a write-ahead log (WAL).
//!
//! Layout of a data directory:
//! - `LOCK`: held with an exclusive advisory lock while a store has the directory open, so two
//!   stores never interleave their appends.
//! - `snapshot.jsonl`: a header line `{"kruise_store_snapshot":1,"rv":N,"objects":M}` followed
//!   by one line per object. Written to a temporary file, fsync'd, then renamed into place, so
//!   it is either the old or the new complete snapshot, never a mix.
//! - `wal.jsonl`: one JSON line per write made after the snapshot (`op` is `put` or `del`),
//!   appended and fsync'd before the write becomes visible. A crash can leave only the last
//!   line torn; that line is ignored (and cut off) on the next open.
//!
//! Compaction writes a new snapshot and then empties the WAL. A crash between the two leaves
//! WAL records that the snapshot already covers; they are recognised by their resourceVersion
//! and skipped.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ObjectKey, StoreError};

const SNAPSHOT_FILE: &str = "snapshot.jsonl";
const SNAPSHOT_TMP_FILE: &str = "snapshot.jsonl.tmp";
const WAL_FILE: &str = "wal.jsonl";
const LOCK_FILE: &str = "LOCK";
const SNAPSHOT_FORMAT: u32 = 1;

/// Kind of a WAL record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Op {
    /// The object was created or replaced; the record carries the full new state.
    Put,
    /// The object was removed.
    Del,
}

/// One WAL line as read back from disk.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(super) struct WalRecord {
    pub rv: u64,
    pub op: Op,
    pub g: String,
    pub r: String,
    #[serde(default)]
    pub ns: Option<String>,
    pub n: String,
    #[serde(default)]
    pub o: Option<Value>,
}

impl WalRecord {
    /// The key of the object this record changes.
    pub fn key(&self) -> ObjectKey {
        ObjectKey {
            group: self.g.clone(),
            resource: self.r.clone(),
            namespace: self.ns.clone(),
            name: self.n.clone(),
        }
    }
}

/// Borrowed form of a WAL line, so appending never clones the object.
#[derive(Serialize)]
struct WalRecordRef<'a> {
    rv: u64,
    op: Op,
    g: &'a str,
    r: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ns: Option<&'a str>,
    n: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    o: Option<&'a Value>,
}

#[derive(Serialize, Deserialize)]
struct SnapshotHeader {
    kruise_store_snapshot: u32,
    rv: u64,
    objects: usize,
}

#[derive(Serialize)]
struct SnapshotLineRef<'a> {
    rv: u64,
    g: &'a str,
    r: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ns: Option<&'a str>,
    n: &'a str,
    o: &'a Value,
}

#[derive(Deserialize)]
struct SnapshotLine {
    rv: u64,
    g: String,
    r: String,
    #[serde(default)]
    ns: Option<String>,
    n: String,
    o: Value,
}

/// The decoded content of a snapshot file.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Snapshot {
    /// The store's resourceVersion when the snapshot was taken.
    pub rv: u64,
    /// Every object with the RV of its last write.
    pub objects: Vec<(ObjectKey, u64, Value)>,
}

/// The decoded content of a WAL file.
#[derive(Debug, Default, PartialEq)]
pub(super) struct WalContent {
    /// Complete, well-formed records in file order.
    pub records: Vec<WalRecord>,
    /// Byte length of the prefix holding those records; anything after it is a torn tail.
    pub valid_len: u64,
}

/// Everything read back from a data directory.
pub(super) struct Recovered {
    pub snapshot: Snapshot,
    /// WAL records newer than the snapshot, in RV order, each exactly one above the previous.
    pub wal: Vec<WalRecord>,
}

/// Serialises one WAL record as a single newline-terminated JSON line.
pub(super) fn encode_wal_record(
    rv: u64,
    key: &ObjectKey,
    object: Option<&Value>,
) -> Result<Vec<u8>, StoreError> {
    let record = WalRecordRef {
        rv,
        op: if object.is_some() { Op::Put } else { Op::Del },
        g: &key.group,
        r: &key.resource,
        ns: key.namespace.as_deref(),
        n: &key.name,
        o: object,
    };
    let mut line = serde_json::to_vec(&record).map_err(|e| StoreError::Corrupt(format!("encoding: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

/// Decodes a WAL file. A last line that is unterminated or unparsable is treated as a write
/// torn by a crash and left out; an unparsable line followed by more data means real damage.
pub(super) fn parse_wal(bytes: &[u8]) -> Result<WalContent, StoreError> {
    let mut content = WalContent::default();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let rest = &bytes[offset..];
        let Some(newline) = rest.iter().position(|b| *b == b'\n') else {
            // Unterminated tail: the append never completed.
            break;
        };
        let line = &rest[..newline];
        let end = offset + newline + 1;
        match serde_json::from_slice::<WalRecord>(line) {
            Ok(record) => {
                if record.op == Op::Put && record.o.is_none() {
                    return Err(StoreError::Corrupt(format!(
                        "WAL put record at byte {offset} has no object"
                    )));
                }
                content.records.push(record);
                content.valid_len = end as u64;
            }
            Err(_) if end >= bytes.len() => break,
            Err(e) => {
                return Err(StoreError::Corrupt(format!("WAL record at byte {offset} is unreadable: {e}")));
            }
        }
        offset = end;
    }
    Ok(content)
}

/// Decodes a snapshot file (which is always complete, as it is renamed into place).
pub(super) fn parse_snapshot(bytes: &[u8]) -> Result<Snapshot, StoreError> {
    let mut lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty());
    let header_line = lines.next().ok_or_else(|| StoreError::Corrupt("snapshot is empty".into()))?;
    let header: SnapshotHeader = serde_json::from_slice(header_line)
        .map_err(|e| StoreError::Corrupt(format!("snapshot header is unreadable: {e}")))?;
    if header.kruise_store_snapshot != SNAPSHOT_FORMAT {
        return Err(StoreError::Corrupt(format!(
            "snapshot format {} is not supported",
            header.kruise_store_snapshot
        )));
    }
    let mut objects = Vec::with_capacity(header.objects);
    for (index, line) in lines.enumerate() {
        let entry: SnapshotLine = serde_json::from_slice(line)
            .map_err(|e| StoreError::Corrupt(format!("snapshot object {index} is unreadable: {e}")))?;
        if entry.rv > header.rv {
            return Err(StoreError::Corrupt(format!(
                "snapshot object {index} has resourceVersion {} above the snapshot's {}",
                entry.rv, header.rv
            )));
        }
        let key = ObjectKey { group: entry.g, resource: entry.r, namespace: entry.ns, name: entry.n };
        objects.push((key, entry.rv, entry.o));
    }
    if objects.len() != header.objects {
        return Err(StoreError::Corrupt(format!(
            "snapshot announces {} objects but holds {}",
            header.objects,
            objects.len()
        )));
    }
    Ok(Snapshot { rv: header.rv, objects })
}

/// Keeps the WAL records a snapshot at `snapshot_rv` does not already cover, checking that they
/// continue its resourceVersions without a gap (a gap means lost writes).
pub(super) fn records_after_snapshot(
    snapshot_rv: u64,
    records: Vec<WalRecord>,
) -> Result<Vec<WalRecord>, StoreError> {
    let mut last = snapshot_rv;
    let mut kept = Vec::with_capacity(records.len());
    for record in records {
        if record.rv <= snapshot_rv {
            continue;
        }
        if record.rv != last + 1 {
            return Err(StoreError::Corrupt(format!(
                "WAL jumps from resourceVersion {last} to {}",
                record.rv
            )));
        }
        last = record.rv;
        kept.push(record);
    }
    Ok(kept)
}

/// The open data directory: the WAL file kept open for appends, and the directory lock.
pub(super) struct Persist {
    dir: PathBuf,
    wal: File,
    wal_len: u64,
    wal_records: usize,
    compact_after: usize,
    /// Set when a failed append could not be rolled back: further appends would land after
    /// garbage, so every later write is refused.
    poisoned: bool,
    _lock: File,
}

impl Persist {
    /// Locks and reads a data directory (creating it if needed) and opens its WAL for appends.
    pub(super) fn open(dir: &Path, compact_after: usize) -> Result<(Persist, Recovered), StoreError> {
        fs::create_dir_all(dir)?;
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Io(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("data directory {} is in use by another store", dir.display()),
                )));
            }
            Err(TryLockError::Error(e)) => return Err(StoreError::Io(e)),
        }

        match fs::remove_file(dir.join(SNAPSHOT_TMP_FILE)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }

        let snapshot = match fs::read(dir.join(SNAPSHOT_FILE)) {
            Ok(bytes) => parse_snapshot(&bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Snapshot::default(),
            Err(e) => return Err(e.into()),
        };

        let wal_path = dir.join(WAL_FILE);
        let existed = wal_path.exists();
        let mut wal = OpenOptions::new().create(true).read(true).append(true).open(&wal_path)?;
        let mut bytes = Vec::new();
        wal.read_to_end(&mut bytes)?;
        let content = parse_wal(&bytes)?;
        if content.valid_len < bytes.len() as u64 {
            // Cut the torn tail so the next append starts on a clean line.
            wal.set_len(content.valid_len)?;
            wal.sync_all()?;
        }
        if !existed {
            sync_dir(dir)?;
        }
        let wal_records = content.records.len();
        let records = records_after_snapshot(snapshot.rv, content.records)?;
        let persist = Persist {
            dir: dir.to_path_buf(),
            wal,
            wal_len: content.valid_len,
            wal_records,
            compact_after,
            poisoned: false,
            _lock: lock,
        };
        Ok((persist, Recovered { snapshot, wal: records }))
    }

    /// Appends one record and waits until it is on disk. On failure the file is cut back to
    /// its previous length so a half-written record never precedes later ones.
    pub(super) fn append(
        &mut self,
        rv: u64,
        key: &ObjectKey,
        object: Option<&Value>,
    ) -> Result<(), StoreError> {
        if self.poisoned {
            return Err(StoreError::Io(io::Error::other(
                "an earlier WAL write failed and could not be rolled back; the store is read-only",
            )));
        }
        let line = encode_wal_record(rv, key, object)?;
        let result = self.wal.write_all(&line).and_then(|()| self.wal.sync_data());
        match result {
            Ok(()) => {
                self.wal_len += line.len() as u64;
                self.wal_records += 1;
                Ok(())
            }
            Err(e) => {
                if self.wal.set_len(self.wal_len).and_then(|()| self.wal.sync_data()).is_err() {
                    self.poisoned = true;
                }
                Err(e.into())
            }
        }
    }

    /// Whether the WAL has grown enough to be folded into a new snapshot. The threshold grows
    /// with the number of live objects so that snapshot cost stays proportional to the writes.
    pub(super) fn should_compact(&self, live_objects: usize) -> bool {
        self.wal_records > self.compact_after.max(live_objects)
    }

    /// Number of records currently in the WAL file.
    pub(super) fn wal_records(&self) -> usize {
        self.wal_records
    }

    /// Writes a snapshot of `objects` at `rv` and then empties the WAL.
    pub(super) fn compact(
        &mut self,
        rv: u64,
        objects: &[(ObjectKey, u64, Arc<Value>)],
    ) -> Result<(), StoreError> {
        let tmp_path = self.dir.join(SNAPSHOT_TMP_FILE);
        let file = File::create(&tmp_path)?;
        let mut out = BufWriter::new(file);
        let encode_err = |e: serde_json::Error| StoreError::Corrupt(format!("encoding snapshot: {e}"));
        let header = SnapshotHeader { kruise_store_snapshot: SNAPSHOT_FORMAT, rv, objects: objects.len() };
        serde_json::to_writer(&mut out, &header).map_err(encode_err)?;
        out.write_all(b"\n")?;
        for (key, object_rv, object) in objects {
            let line = SnapshotLineRef {
                rv: *object_rv,
                g: &key.group,
                r: &key.resource,
                ns: key.namespace.as_deref(),
                n: &key.name,
                o: object,
            };
            serde_json::to_writer(&mut out, &line).map_err(encode_err)?;
            out.write_all(b"\n")?;
        }
        let file = out.into_inner().map_err(|e| StoreError::Io(e.into_error()))?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp_path, self.dir.join(SNAPSHOT_FILE))?;
        sync_dir(&self.dir)?;

        self.wal.set_len(0)?;
        self.wal.sync_all()?;
        self.wal_len = 0;
        self.wal_records = 0;
        Ok(())
    }
}

/// Makes a rename or file creation in `dir` durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(ns: Option<&str>, name: &str) -> ObjectKey {
        ObjectKey {
            group: "apps".into(),
            resource: "deployments".into(),
            namespace: ns.map(str::to_string),
            name: name.into(),
        }
    }

    fn put_line(rv: u64, name: &str) -> Vec<u8> {
        encode_wal_record(rv, &key(Some("default"), name), Some(&json!({"metadata": {"name": name}})))
            .unwrap_or_default()
    }

    #[test]
    fn wal_round_trips_puts_and_deletes() {
        let mut bytes = put_line(1, "a");
        bytes.extend(encode_wal_record(2, &key(None, "b"), None).unwrap_or_default());
        let content = parse_wal(&bytes).unwrap_or_default();
        assert_eq!(content.valid_len, bytes.len() as u64);
        assert_eq!(content.records.len(), 2);
        assert_eq!(content.records[0].op, Op::Put);
        assert_eq!(content.records[0].key(), key(Some("default"), "a"));
        assert_eq!(content.records[1].op, Op::Del);
        assert_eq!(content.records[1].key(), key(None, "b"));
        assert_eq!(content.records[1].o, None);
    }

    #[test]
    fn wal_tails_are_handled_like_crash_leftovers() {
        let good = [put_line(1, "a"), put_line(2, "b")].concat();
        let good_len = good.len() as u64;
        // (description, bytes, expected record count, expected valid length, corrupt?)
        let cases: Vec<(&str, Vec<u8>, usize, u64, bool)> = vec![
            ("empty file", vec![], 0, 0, false),
            ("clean file", good.clone(), 2, good_len, false),
            (
                "unterminated half record",
                [good.clone(), b"{\"rv\":3,\"op\":\"pu".to_vec()].concat(),
                2,
                good_len,
                false,
            ),
            ("garbage last line", [good.clone(), b"\x00\x00garbage\n".to_vec()].concat(), 2, good_len, false),
            (
                "whole record without newline",
                [good.clone(), put_line(3, "c")[..10].to_vec()].concat(),
                2,
                good_len,
                false,
            ),
            (
                "garbage in the middle",
                [put_line(1, "a"), b"xx\n".to_vec(), put_line(2, "b")].concat(),
                0,
                0,
                true,
            ),
            (
                "put without object",
                b"{\"rv\":1,\"op\":\"put\",\"g\":\"\",\"r\":\"pods\",\"n\":\"x\"}\n".to_vec(),
                0,
                0,
                true,
            ),
        ];
        for (what, bytes, count, valid_len, corrupt) in cases {
            match parse_wal(&bytes) {
                Ok(content) => {
                    assert!(!corrupt, "{what}: expected corruption");
                    assert_eq!(content.records.len(), count, "{what}");
                    assert_eq!(content.valid_len, valid_len, "{what}");
                }
                Err(e) => {
                    assert!(corrupt, "{what}: unexpected error {e}");
                    assert!(matches!(e, StoreError::Corrupt(_)), "{what}");
                }
            }
        }
    }

    #[test]
    fn records_after_snapshot_skips_covered_and_rejects_gaps() {
        let parse = |lines: Vec<Vec<u8>>| parse_wal(&lines.concat()).unwrap_or_default().records;
        let kept =
            records_after_snapshot(2, parse(vec![put_line(1, "a"), put_line(2, "b"), put_line(3, "c")]));
        assert_eq!(kept.map(|r| r.iter().map(|r| r.rv).collect::<Vec<_>>()).ok(), Some(vec![3]));
        let all_covered = records_after_snapshot(5, parse(vec![put_line(4, "a"), put_line(5, "b")]));
        assert_eq!(all_covered.map(|r| r.len()).ok(), Some(0));
        let gap = records_after_snapshot(0, parse(vec![put_line(1, "a"), put_line(3, "b")]));
        assert!(matches!(gap, Err(StoreError::Corrupt(_))));
        let late_start = records_after_snapshot(3, parse(vec![put_line(5, "a")]));
        assert!(matches!(late_start, Err(StoreError::Corrupt(_))));
    }

    #[test]
    fn snapshot_parsing_validates_header_and_count() {
        let header =
            |rv: u64, n: usize| format!("{{\"kruise_store_snapshot\":1,\"rv\":{rv},\"objects\":{n}}}\n");
        let object =
            "{\"rv\":3,\"g\":\"\",\"r\":\"namespaces\",\"n\":\"default\",\"o\":{\"kind\":\"Namespace\"}}\n";
        let ok = parse_snapshot(format!("{}{object}", header(7, 1)).as_bytes());
        let snapshot = ok.unwrap_or_default();
        assert_eq!(snapshot.rv, 7);
        assert_eq!(snapshot.objects.len(), 1);
        assert_eq!(snapshot.objects[0].0.namespace, None);
        assert_eq!(snapshot.objects[0].1, 3);

        let cases: Vec<(&str, String)> = vec![
            ("empty", String::new()),
            ("bad header", "nonsense\n".into()),
            ("unknown format", "{\"kruise_store_snapshot\":9,\"rv\":1,\"objects\":0}\n".into()),
            ("missing object", header(7, 2) + object),
            ("object newer than snapshot", header(2, 1) + object),
            ("bad object", header(7, 1) + "{]\n"),
        ];
        for (what, text) in cases {
            assert!(matches!(parse_snapshot(text.as_bytes()), Err(StoreError::Corrupt(_))), "{what}");
        }
    }
}
