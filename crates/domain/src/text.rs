//! Small helpers shared by the validating constructors.

/// Length in characters (not bytes), which is what users mean by "length".
pub(crate) fn char_len(s: &str) -> usize {
    s.chars().count()
}
