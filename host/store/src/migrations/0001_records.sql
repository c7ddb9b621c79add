-- Every space of records (see store/records): ordered byte keys and values.
CREATE TABLE quarry_records (
    space text NOT NULL,
    key bytea NOT NULL,
    value bytea NOT NULL,
    PRIMARY KEY (space, key)
);
