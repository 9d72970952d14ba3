//! Every row of a snapshot, as a `reset` group sends it, with no table
//! built: a recording's keyframe.

use super::{
    Snapshot, Table, Tables, backoff_row, fit, inputs, instance_row, operation_row, to_value,
};

impl Tables {
    /// Every row of `snapshot` as the JSON text a `reset` group sends
    /// (what [`Tables::update_with`] hands out from empty tables:
    /// instances, then operations, then backoffs, each in the snapshot's
    /// order), handed to `each` one at a time; nothing held, no table
    /// built: a recording's keyframe. Returns the rows per table.
    pub fn every_row(snapshot: &Snapshot, each: &mut dyn FnMut(Table, String)) -> [usize; 3] {
        for row in &*snapshot.instances {
            each(
                Table::Instances,
                instance_row(snapshot, row, inputs(snapshot, row, None)),
            );
        }
        for op in &snapshot.operations {
            each(Table::Operations, fit(to_value(&operation_row(op))));
        }
        for attempt in &snapshot.reap_attempts {
            each(Table::Backoffs, fit(to_value(&backoff_row(attempt))));
        }
        [
            snapshot.instances.len(),
            snapshot.operations.len(),
            snapshot.reap_attempts.len(),
        ]
    }
}
