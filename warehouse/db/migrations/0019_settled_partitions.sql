-- Hour partitions of the raw log in which a compaction found every file compacted, with the
-- modification time their folder had then (ms since the epoch, as the file system reports it).
-- A later compaction lists the files of a partition only when its folder's time differs (a file
-- was added, renamed in or deleted), so a no-op run costs one listing of the window's folders,
-- not a listing of every file already compacted. Written in the batch's transaction.
create table lineage.settled_partitions (
    partition_path text primary key,
    modified_ms bigint not null,
    files integer not null,
    batch_id text,
    settled_at timestamptz not null default now()
);
