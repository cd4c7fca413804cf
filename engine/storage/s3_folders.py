"""Directories with a life cycle on S3, for fencing (engine/table/fencing.py): folder
markers changed only by compare-and-swap (the S3 backend's fence directories)."""

from __future__ import annotations

import base64
import contextlib
import errno
import json

from engine.storage.s3_objects import Objects, PreconditionFailed, new_write_id

MARKER = "ib_dir"
OPEN, SEALED = "open", "sealed"
_MARKER_HEAD = b'{"ib_dir": '  # how every marker's JSON starts (_marker)


def _marker(
    state: str,
    pending: dict | None = None,
    finished: dict | None = None,
    published: str | None = None,
) -> bytes:
    """A folder's record: its state, the write it decided last and did not publish yet
    (open), the id of the one it published last (open: nothing for a seal to finish), or
    the one its sealer finished (and which of its objects the sealer itself created)."""
    extra: dict = (
        {"pending": pending}
        if pending
        else {"finished": finished}
        if finished
        else {"published": published}
        if published
        else {}
    )
    return json.dumps({MARKER: state, **extra}).encode()


class Folders:
    """Directories with a life cycle on S3, for fencing (engine/table/fencing.py).

    On a local disk a fence grant is a directory: a temp is staged in it and linked into
    place, and `rmdir` kills it, after which nothing can be created in it. Objects have no
    directories, rename or link, so here a directory D made by `create_dir` is a marker
    object at D's own name holding its state, changed only by compare-and-swap:

    * create: an exclusive PUT of the marker (`open`), then a look at the parent's marker:
      a sealed parent refuses it (a sealer seals the parent first, then lists and seals
      its children, so a child created before that look is seen and sealed);
    * a staged write records itself in the marker (a CAS: `open` + the pending write,
      bytes included), then publishes: the claim, then the path, each an exclusive PUT (a
      replace: If-Match the version the path had before). The CAS is the decision: it fails
      once the marker is sealed, so nothing is decided after a seal;
    * a staged delete (`delete_staged`) records itself the same way (the object and its
      etag), then deletes If-Match that etag;
    * seal (`remove_dir`): finish the pending write (or delete) the marker holds (it was
      decided before the seal), then CAS the marker to `sealed`, naming the objects the
      sealer created; a folder that holds folders (an epoch domain) then seals every child
      still open;
    * after publishing, the holder marks the write published (a CAS from the marker it
      decided on: a seal then has nothing to finish, so an object removed since, say an
      archived instant's completed file, is never brought back). The CAS fails if the
      marker changed: sealed meanwhile, the holder fails (FileNotFoundError, as a local
      holder whose temp was taken). A holder paused between its CAS and its publication
      finds its objects there already (the sealer published them); if one was removed
      since (a rollback), its PUT brought it back, which it sees (the sealer created that
      object too) and undoes (a DELETE If-Match its own etag).
    A tombstone (put_if_absent at a grant's name) is an exclusive PUT at the marker's name;
    `makedirs` makes an open marker (parents are implicit); renaming a folder (markers'
    seal, engine/table/markers.py) seals it in place, then moves its objects.

    Limits: between a resumed holder's late PUT and its undo, a reader can see the object
    it brought back (for two requests' time); every guarantee rests on the store applying
    conditional writes atomically (S3 does; so does moto's server as a run starts it,
    infra/services/moto_serialized.py, and moto alone does not).
    """

    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        self._etags: dict[str, str] = {}  # marker -> the etag this process wrote last

    def state(self, full: str) -> tuple[dict | None, str | None]:
        """(marker record, etag); (None, None) if there is no object at `full`;
        NotADirectoryError if the object there is not a marker (a tombstone)."""
        try:
            data, etag, _ = self.objects.get(full)
        except FileNotFoundError:
            return None, None
        if not self.is_marker(data):
            raise NotADirectoryError(full)
        return json.loads(data), etag

    def refuse_if_sealed(self, full: str) -> None:
        """FileNotFoundError unless `full` is an open folder (made, and not sealed)."""
        try:
            record, _ = self.state(full)
        except NotADirectoryError:
            raise FileNotFoundError(full) from None
        if record is None or record[MARKER] != OPEN:
            raise FileNotFoundError(full)

    def ensure(self, full: str) -> None:
        """Make `full` an open folder unless it is one, or was sealed (makedirs)."""
        with contextlib.suppress(PreconditionFailed):
            self.objects.put(full, _marker(OPEN), new_write_id(), if_none_match=True)

    def create(self, full: str) -> None:
        """Make the folder `full`: FileExistsError if anything has its name,
        FileNotFoundError if its parent is not an open folder."""
        try:
            etag = self.objects.put(full, _marker(OPEN), new_write_id(), if_none_match=True)
        except PreconditionFailed:
            raise FileExistsError(full) from None
        try:
            self.refuse_if_sealed(full.rsplit("/", 1)[0])
        except FileNotFoundError:
            self.objects.delete_if(full, etag)  # not made after all (unless a sealer saw it)
            raise
        self._etags[full] = etag

    @staticmethod
    def is_marker(data: bytes) -> bool:
        return data.startswith(_MARKER_HEAD)

    def put_staged(
        self, staging: str, path: str, data: bytes, claim: str | None, replace: bool, write_id: str
    ) -> None:
        """`write_id` tags what it publishes (a retry with the same id finds its own)."""
        pending = {
            "id": write_id,
            "path": path,
            "claim": claim,
            "data": base64.b64encode(data).decode(),
            "prior": self.objects.etag(path) if replace else None,
            "replace": replace,
        }
        self._decide(staging, pending)
        created = self._publish(pending, sealing=False)
        if self._settle(staging, write_id):
            return
        now, _ = self.state(staging)
        if now is None or now[MARKER] != OPEN:  # sealed meanwhile: the sealer published it
            finished = (now or {}).get("finished") or {}
            theirs = finished.get("created", []) if finished.get("id") == pending["id"] else []
            for full, new_etag in created:
                if full in theirs:  # the sealer's was removed since: ours brought it back
                    self.objects.delete_if(full, new_etag)
            raise FileNotFoundError(staging)

    def _settle(self, staging: str, write_id: str) -> bool:
        """Record in the marker that the decided write is published (a CAS from the marker
        this holder decided on; its request takes the place of a read that looks for a
        seal): a later seal must not publish it again, since its objects may have been
        removed meanwhile (an archived or rolled-back instant's file brought back). False
        if the marker changed since the decision (sealed, or another decision of the
        grant's holder)."""
        etag = self._etags.get(staging)
        if etag is None:
            return False
        try:
            self._etags[staging] = self.objects.put(
                staging, _marker(OPEN, published=write_id), new_write_id(), if_match=etag
            )
        except (PreconditionFailed, FileNotFoundError):
            return False
        return True

    def delete_staged(self, staging: str, full: str, write_id: str) -> None:
        """Delete the object `full` as decided by a CAS on `staging`'s marker (refused once
        sealed): the marker records the object's etag, and the delete is If-Match that
        etag, by the holder or by a sealer that finishes it, so a late delete never removes
        an object written since (unless with the very same bytes: an etag is their MD5)."""
        etag = self.objects.etag(full)
        if etag is None:
            return  # deleted already
        self._decide(staging, {"id": write_id, "delete": full, "etag": etag})
        self.objects.delete_if(full, etag)

    def _decide(self, staging: str, pending: dict) -> None:
        """Record `pending` in `staging`'s marker by compare-and-swap: the decision, refused
        (FileNotFoundError) once the marker is sealed."""
        record = _marker(OPEN, pending)
        etag = self._etags.get(staging)
        while True:
            if etag is not None:
                try:
                    self._etags[staging] = self.objects.put(
                        staging, record, new_write_id(), if_match=etag
                    )
                    return
                except (PreconditionFailed, FileNotFoundError):
                    pass
            state, etag = self.state(staging)
            if state is None or state[MARKER] != OPEN:
                raise FileNotFoundError(staging)

    def seal(self, full: str) -> bool | None:
        """Finish the pending write, then mark `full` sealed: True if this call sealed it,
        False if it was sealed already, None if there is no folder `full`."""
        while True:
            record, etag = self.state(full)
            if record is None:
                return None
            if record[MARKER] != OPEN:
                return False
            finished = None
            if (pending := record.get("pending")) and "delete" in pending:
                self.objects.delete_if(pending["delete"], pending["etag"])  # decided: finish it
            elif pending:
                made = self._publish(pending, sealing=True)
                finished = {"id": pending["id"], "created": [f for f, _ in made]}
            try:
                sealed = _marker(SEALED, finished=finished)
                self.objects.put(full, sealed, new_write_id(), if_match=etag)
                return True
            except (PreconditionFailed, FileNotFoundError):
                continue  # its holder wrote meanwhile: finish that one too

    def _publish(self, pending: dict, *, sealing: bool) -> list[tuple[str, str]]:
        """Put the claim, then the path; (object, etag) of what this call created.
        FileExistsError (filename: the object) if another write holds the claim or path
        (a sealer swallows it: that write lost, as it would have for its holder)."""
        data, write_id = base64.b64decode(pending["data"]), pending["id"]
        created = []
        targets = [(pending["claim"], None, False), (pending["path"], pending["prior"], True)]
        for full, prior, is_path in targets:
            if full is None:
                continue
            replace = is_path and pending["replace"]
            try:
                etag = self.objects.put(
                    full,
                    data,
                    write_id,
                    if_none_match=not replace or prior is None,
                    if_match=prior if replace else None,
                )
                created.append((full, etag))
            except (PreconditionFailed, FileNotFoundError):
                if replace or self._written_by(full, write_id):
                    continue  # published already (by the sealer), or superseded since
                if sealing:
                    return created
                raise FileExistsError(errno.EEXIST, "already exists", full) from None
        return created

    def _written_by(self, full: str, write_id: str) -> bool:
        try:
            return self.objects.get(full)[2] == write_id
        except FileNotFoundError:
            return False
