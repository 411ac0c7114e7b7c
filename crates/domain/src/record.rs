//! How an aggregate keeps its facts: in a record that only the aggregate's
//! methods change.

/// Gives an aggregate that wraps its record read access and a way in and out
/// of a store: `Deref` to the record, `restore`, `record` and `into_record`.
/// There is deliberately no `DerefMut`: a caller reads every fact, but moves
/// the aggregate only through the methods that keep its rules.
macro_rules! kept_in_record {
    ($aggregate:ident, $record:ident) => {
        impl std::ops::Deref for $aggregate {
            type Target = $record;

            fn deref(&self) -> &$record {
                &self.record
            }
        }

        impl $aggregate {
            /// One as a store kept it. A store restores what an earlier
            /// write of this aggregate produced; nothing is checked again.
            pub fn restore(record: $record) -> Self {
                Self { record }
            }

            /// Every fact about it.
            pub fn record(&self) -> &$record {
                &self.record
            }

            /// Its facts, owned, for a store to write.
            pub fn into_record(self) -> $record {
                self.record
            }
        }
    };
}
