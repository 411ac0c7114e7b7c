//! The crate's macros: how an aggregate keeps its facts (in a record that
//! only its methods change), and how a closed list of names is parsed.

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

/// Declares an enum whose values each have one name, stored and shown
/// alike, and a `parse` whose refusal names the field and every allowed name.
macro_rules! api_enum {
    (
        $(#[$doc:meta])* $name:ident, $field:literal {
            $( $(#[$vdoc:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vdoc])* $variant ),+
        }

        impl $name {
            /// Every value, in the order the API lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored name, which the API also uses.
            pub fn as_str(&self) -> &'static str {
                match self { $( Self::$variant => $text ),+ }
            }

            /// Parses a name given by a client.
            pub fn parse(s: &str) -> Result<Self, $crate::error::ValidationError> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| {
                    let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                    $crate::error::ValidationError::field(
                        $field,
                        format!("{} must be one of {}", $field, names.join(", ")),
                    )
                })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
