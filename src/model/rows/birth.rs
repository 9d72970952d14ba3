//! [`Birth`]: which birth of a name a row is, and [`BirthStr`], its texts
//! as read.

/// Which birth of a name a row is (migration 7, stackless 0.4.0: names are
/// aliases). A name torn down and brought up again is a new birth with a new
/// `instance_id`, updated in place in the same row, so the console never
/// acts on a name alone: a teardown's re-check and any GC compare the birth
/// (docs/stackless-releases.md, "Schema 14").
///
/// A birth under 0.4.0 (`instance_id` 32 lowercase hex, the namespace
/// `sl-<instance_id>`) is held in the row as the id's 16 bytes, hex
/// decoded, with no allocation of its own (`Option<Birth>` 24 B, 40 with
/// the text: measured at a million instances, the row's block drops from
/// 192 to 160 B with `Instance` at 136 B, BENCHMARKS.md "The console's
/// rows at 1M"); any
/// other keeps both texts as stored, boxed. Its texts are read as
/// [`BirthStr`]s.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Birth(pub(super) Held);

/// How a [`Birth`] is held. One birth has one form only ([`Birth::new`]
/// chooses), so the derived equality is the texts'.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) enum Held {
    /// `instance_id` of 32 lowercase hex, decoded; the namespace is
    /// `sl-<instance_id>`.
    Derived([u8; ID_BYTES]),
    /// `instance_id` and `resource_namespace` as stored.
    Stored(Box<(Box<str>, Box<str>)>),
}

/// The bytes of a 0.4.0 `instance_id` (32 hex digits).
const ID_BYTES: usize = 16;

/// `sl-` and a 32-digit `instance_id`: the longest text held inline.
const NAMESPACE_LEN: usize = 3 + 2 * ID_BYTES;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The value of one lowercase hex digit (`None` for anything else: an
/// uppercase digit would not come back the same).
fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// `id` decoded, when it is 32 lowercase hex digits.
fn decode(id: &str) -> Option<[u8; ID_BYTES]> {
    let digits = id.as_bytes();
    if digits.len() != 2 * ID_BYTES {
        return None;
    }
    let mut out = [0; ID_BYTES];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

impl Birth {
    /// The birth with this `instance_id` and `resource_namespace`; read
    /// back exactly as given, whatever the texts.
    #[must_use]
    pub fn new(instance_id: &str, resource_namespace: &str) -> Self {
        if resource_namespace.strip_prefix("sl-") == Some(instance_id)
            && let Some(id) = decode(instance_id)
        {
            return Self(Held::Derived(id));
        }
        Self(Held::Stored(Box::new((
            instance_id.into(),
            resource_namespace.into(),
        ))))
    }

    /// `instance_id`: 32 lowercase hex, unique, new for every birth.
    #[must_use]
    pub fn instance_id(&self) -> BirthStr<'_> {
        match &self.0 {
            Held::Derived(id) => {
                let mut text = [0; NAMESPACE_LEN];
                write_hex(id, &mut text);
                BirthStr(Text::Inline {
                    text,
                    len: (2 * ID_BYTES) as u8,
                })
            }
            Held::Stored(texts) => BirthStr(Text::Borrowed(&texts.0)),
        }
    }

    /// `resource_namespace`: `sl-<instance_id>` for births under 0.4.0, the
    /// name for rows migrated from before. Names the logs directory
    /// `logs/<resource_namespace>/`.
    #[must_use]
    pub fn resource_namespace(&self) -> BirthStr<'_> {
        match &self.0 {
            Held::Derived(id) => {
                let mut text = [0; NAMESPACE_LEN];
                text[..3].copy_from_slice(b"sl-");
                write_hex(id, &mut text[3..]);
                BirthStr(Text::Inline {
                    text,
                    len: NAMESPACE_LEN as u8,
                })
            }
            Held::Stored(texts) => BirthStr(Text::Borrowed(&texts.1)),
        }
    }
}

/// `id` as lowercase hex into the start of `out`.
fn write_hex(id: &[u8; ID_BYTES], out: &mut [u8]) {
    for (pair, byte) in out.chunks_exact_mut(2).zip(id) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0xf)];
    }
}

impl std::fmt::Debug for Birth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Birth")
            .field("instance_id", &self.instance_id())
            .field("resource_namespace", &self.resource_namespace())
            .finish()
    }
}

/// One of a [`Birth`]'s texts, as stored: reads as a `str` (`Deref`,
/// `Display`, compared with `str` and `String`). A 0.4.0 birth's is made
/// on the stack from the decoded id (nothing allocated), another's
/// borrowed from the row. `.to_owned()` gives a `String`.
pub struct BirthStr<'a>(Text<'a>);

enum Text<'a> {
    /// The first `len` bytes of `text` (ASCII: hex and `sl-`).
    Inline {
        text: [u8; NAMESPACE_LEN],
        len: u8,
    },
    Borrowed(&'a str),
}

impl BirthStr<'_> {
    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Always valid: hex digits and `sl-`.
            Text::Inline { text, len } => {
                std::str::from_utf8(text.get(..usize::from(*len)).unwrap_or_default())
                    .unwrap_or_default()
            }
            Text::Borrowed(text) => text,
        }
    }
}

impl std::ops::Deref for BirthStr<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for BirthStr<'_> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for BirthStr<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for BirthStr<'_> {}

impl PartialEq<str> for BirthStr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for BirthStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for BirthStr<'_> {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<BirthStr<'_>> for str {
    fn eq(&self, other: &BirthStr<'_>) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<BirthStr<'_>> for &str {
    fn eq(&self, other: &BirthStr<'_>) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<BirthStr<'_>> for &String {
    fn eq(&self, other: &BirthStr<'_>) -> bool {
        *self == other.as_str()
    }
}

impl serde::Serialize for BirthStr<'_> {
    /// As the text (the protocol's rows and `snapshot --json`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::hash::Hash for BirthStr<'_> {
    /// As the text.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for BirthStr<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BirthStr<'_> {
    /// As the texts.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialEq<BirthStr<'_>> for String {
    fn eq(&self, other: &BirthStr<'_>) -> bool {
        self == other.as_str()
    }
}

impl std::fmt::Display for BirthStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for BirthStr<'_> {
    /// As the text (`"sl-…"`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}
