//! Type layouts from DWARF: what the DLL's `mqs_find_type`, `mqs_field_offset` and
//! `mqs_sizeof` callbacks answer.
//!
//! [`DwarfTypes`] reads every named top-level structure, union, typedef, base and enumeration
//! type of an ELF object's `.debug_info` (all compilation units) and resolves a C name the way
//! the DLL means it: a structure or union of that name, else a typedef of that name followed
//! through typedefs and qualifiers to its structure (a declaration resolved to the definition
//! of the same tag). Fields are the structure's direct named members only.

use std::borrow::Cow;
use std::collections::HashMap;

use gimli::{AttributeValue, RunTimeEndian};
use object::{Object, ObjectSection};

use crate::error::MqdError;

/// The layout of one target type: its size and the offsets of its direct named members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeLayout {
    /// The name the type was looked up by.
    pub name: String,
    /// `sizeof`, in bytes.
    pub size: u64,
    /// `(member, offset)` of the direct named members, in declaration order.
    pub fields: Vec<(String, u64)>,
}

impl TypeLayout {
    /// A layout from its parts.
    pub fn new(name: impl Into<String>, size: u64, fields: Vec<(String, u64)>) -> Self {
        TypeLayout {
            name: name.into(),
            size,
            fields,
        }
    }

    /// The offset of member `name`, if the type has one.
    pub fn field_offset(&self, name: &str) -> Option<u64> {
        self.fields.iter().find(|(n, _)| n == name).map(|&(_, o)| o)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Aggregate,
    Typedef,
    Qualifier,
    Sized,
    Pointer,
    /// An array: `count` elements of its `target`.
    Array,
}

#[derive(Clone, Debug)]
struct Die {
    kind: Kind,
    name: Option<String>,
    size: Option<u64>,
    /// `DW_AT_type`: `(unit index, unit offset)`.
    target: Option<(usize, usize)>,
    declaration: bool,
    members: Vec<(String, u64)>,
    /// `DW_AT_type` of each member, in the order of `members`.
    member_types: Vec<Option<(usize, usize)>>,
    /// An array's number of elements (the product of its subranges' counts).
    count: Option<u64>,
}

/// The named types of one object's DWARF.
#[derive(Clone, Debug, Default)]
pub struct DwarfTypes {
    dies: HashMap<(usize, usize), Die>,
    /// Complete structures and unions by tag name.
    aggregates: HashMap<String, (usize, usize)>,
    /// Typedefs, base and enumeration types by name.
    named: HashMap<String, (usize, usize)>,
    address_size: u8,
}

impl DwarfTypes {
    /// Reads the types of the ELF object `data` (an empty set if it has no DWARF).
    pub fn parse(data: &[u8]) -> Result<Self, MqdError> {
        let file = object::File::parse(data).map_err(|e| MqdError::TypeInfo(e.to_string()))?;
        let endian = if file.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
            Ok(file
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or(Cow::Borrowed(&[])))
        };
        let sections = gimli::DwarfSections::load(load).map_err(dwarf_err)?;
        let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, endian));
        let mut types = DwarfTypes {
            address_size: if file.is_64() { 8 } else { 4 },
            ..DwarfTypes::default()
        };
        let mut headers = dwarf.units();
        let mut index = 0usize;
        while let Some(header) = headers.next().map_err(dwarf_err)? {
            let unit = dwarf.unit(header).map_err(dwarf_err)?;
            types.address_size = unit.header.address_size();
            let mut tree = unit.entries_tree(None).map_err(dwarf_err)?;
            let root = tree.root().map_err(dwarf_err)?;
            let mut children = root.children();
            while let Some(child) = children.next().map_err(dwarf_err)? {
                let entry = child.entry();
                let kind = match entry.tag() {
                    gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type => Kind::Aggregate,
                    gimli::DW_TAG_typedef => Kind::Typedef,
                    gimli::DW_TAG_const_type
                    | gimli::DW_TAG_volatile_type
                    | gimli::DW_TAG_restrict_type
                    | gimli::DW_TAG_atomic_type => Kind::Qualifier,
                    gimli::DW_TAG_base_type | gimli::DW_TAG_enumeration_type => Kind::Sized,
                    gimli::DW_TAG_pointer_type => Kind::Pointer,
                    gimli::DW_TAG_array_type => Kind::Array,
                    _ => continue,
                };
                let name = entry
                    .attr_value(gimli::DW_AT_name)
                    .and_then(|v| dwarf.attr_string(&unit, v).ok())
                    .map(|s| s.to_string_lossy().into_owned());
                let size = entry
                    .attr_value(gimli::DW_AT_byte_size)
                    .and_then(|v| v.udata_value());
                let target = match entry.attr_value(gimli::DW_AT_type) {
                    Some(AttributeValue::UnitRef(o)) => Some((index, o.0)),
                    _ => None,
                };
                let declaration = matches!(
                    entry.attr_value(gimli::DW_AT_declaration),
                    Some(AttributeValue::Flag(true))
                );
                let offset = entry.offset().0;
                let mut members = Vec::new();
                let mut member_types = Vec::new();
                let mut count = None;
                if kind == Kind::Array {
                    let mut total = Some(1u64);
                    let mut ranges = child.children();
                    while let Some(r) = ranges.next().map_err(dwarf_err)? {
                        let r = r.entry();
                        if r.tag() != gimli::DW_TAG_subrange_type {
                            continue;
                        }
                        let n = r
                            .attr_value(gimli::DW_AT_count)
                            .and_then(|v| v.udata_value())
                            .or_else(|| {
                                r.attr_value(gimli::DW_AT_upper_bound)
                                    .and_then(|v| v.udata_value())
                                    .and_then(|u| u.checked_add(1))
                            });
                        // Checked: the counts are the file's (an overflow is an unknown
                        // count, not a panic; found by the dwarf_types fuzz target).
                        total = total.zip(n).and_then(|(t, n)| t.checked_mul(n));
                    }
                    count = total;
                } else if kind == Kind::Aggregate && !declaration {
                    let mut ms = child.children();
                    while let Some(m) = ms.next().map_err(dwarf_err)? {
                        let m = m.entry();
                        if m.tag() != gimli::DW_TAG_member {
                            continue;
                        }
                        let Some(mname) = m
                            .attr_value(gimli::DW_AT_name)
                            .and_then(|v| dwarf.attr_string(&unit, v).ok())
                            .map(|s| s.to_string_lossy().into_owned())
                        else {
                            continue;
                        };
                        let off = match m.attr_value(gimli::DW_AT_data_member_location) {
                            Some(v) => v.udata_value(),
                            // A union member, or a bit-field described by its bit offset.
                            None => Some(
                                m.attr_value(gimli::DW_AT_data_bit_offset)
                                    .and_then(|v| v.udata_value())
                                    .map_or(0, |b| b / 8),
                            ),
                        };
                        if let Some(off) = off {
                            members.push((mname, off));
                            member_types.push(match m.attr_value(gimli::DW_AT_type) {
                                Some(AttributeValue::UnitRef(o)) => Some((index, o.0)),
                                _ => None,
                            });
                        }
                    }
                }
                let key = (index, offset);
                if let Some(n) = &name {
                    match kind {
                        Kind::Aggregate if !declaration => {
                            types.aggregates.entry(n.clone()).or_insert(key);
                        }
                        Kind::Typedef | Kind::Sized => {
                            types.named.entry(n.clone()).or_insert(key);
                        }
                        _ => {}
                    }
                }
                types.dies.insert(
                    key,
                    Die {
                        kind,
                        name,
                        size,
                        target,
                        declaration,
                        members,
                        member_types,
                        count,
                    },
                );
            }
            index += 1;
        }
        Ok(types)
    }

    /// Whether the object had no usable type at all (stripped, or no DWARF).
    pub fn is_empty(&self) -> bool {
        self.aggregates.is_empty() && self.named.is_empty()
    }

    /// The layout of C type `name` (see the module documentation for how it is resolved).
    pub fn find(&self, name: &str) -> Option<TypeLayout> {
        if let Some(key) = self.aggregates.get(name) {
            return self.layout(name, *key);
        }
        let key = *self.named.get(name)?;
        self.layout(name, key)
    }

    /// The size of member `field` of type `name` (its type followed through typedefs and
    /// qualifiers to a base, enumeration, pointer or aggregate type), if the DWARF says.
    pub fn field_size(&self, name: &str, field: &str) -> Option<u64> {
        let mut key = self
            .aggregates
            .get(name)
            .or_else(|| self.named.get(name))
            .copied()?;
        for _ in 0..64 {
            let die = self.dies.get(&key)?;
            match die.kind {
                Kind::Typedef | Kind::Qualifier => key = die.target?,
                Kind::Aggregate => {
                    let def = if die.declaration {
                        self.dies.get(self.aggregates.get(die.name.as_deref()?)?)?
                    } else {
                        die
                    };
                    let i = def.members.iter().position(|(n, _)| n == field)?;
                    let member = (*def.member_types.get(i)?)?;
                    return self.layout(field, member).map(|l| l.size);
                }
                _ => return None,
            }
        }
        None
    }

    fn layout(&self, name: &str, key: (usize, usize)) -> Option<TypeLayout> {
        self.layout_within(name, key, 64)
    }

    /// [`layout`](Self::layout) in at most `steps` steps, those of the element types of
    /// arrays included: a cycle through an array (an array of itself, malformed DWARF) ends
    /// too, rather than recursing without end (the recursion a run of the dwarf_types fuzz
    /// target ended in a stack overflow with, before its input could be saved).
    fn layout_within(&self, name: &str, mut key: (usize, usize), steps: u32) -> Option<TypeLayout> {
        // Follow typedefs and qualifiers; a bounded walk (a cycle is malformed DWARF).
        for step in 0..steps {
            let die = self.dies.get(&key)?;
            match die.kind {
                Kind::Typedef | Kind::Qualifier => key = die.target?,
                Kind::Pointer => {
                    return Some(TypeLayout::new(
                        name,
                        die.size.unwrap_or(u64::from(self.address_size)),
                        Vec::new(),
                    ));
                }
                Kind::Sized => return Some(TypeLayout::new(name, die.size?, Vec::new())),
                Kind::Array => {
                    let element = self.layout_within(name, die.target?, steps - step - 1)?;
                    let size = die.size.or_else(|| element.size.checked_mul(die.count?))?;
                    return Some(TypeLayout::new(name, size, Vec::new()));
                }
                Kind::Aggregate if die.declaration => {
                    let tag = die.name.as_deref()?;
                    let def = self.aggregates.get(tag)?;
                    let d = self.dies.get(def)?;
                    return Some(TypeLayout::new(name, d.size?, d.members.clone()));
                }
                Kind::Aggregate => {
                    return Some(TypeLayout::new(name, die.size?, die.members.clone()));
                }
            }
        }
        None
    }
}

fn dwarf_err(e: gimli::Error) -> MqdError {
    MqdError::TypeInfo(format!("DWARF: {e}"))
}
