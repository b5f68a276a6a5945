//! The AMD architectures the AMDGPU target (`amdgpu.rs`) compiles for:
//! their names, wave sizes, LDS sizes and the DPP forms they have.

/// AMD architectures this backend emits code objects for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmdArch {
    Gfx90a,
    Gfx942,
    Gfx950,
    Gfx1100,
    Gfx1200,
}

impl AmdArch {
    pub const ALL: [AmdArch; 5] = [AmdArch::Gfx90a, AmdArch::Gfx942, AmdArch::Gfx950, AmdArch::Gfx1100, AmdArch::Gfx1200];

    /// Parses `gfx942`, `hip:gfx942` and the like (`None`: not an AMD name).
    pub fn parse(s: &str) -> Option<AmdArch> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix("hip:").or_else(|| t.strip_prefix("amd:")).unwrap_or(&t);
        AmdArch::ALL.into_iter().find(|a| a.name() == t)
    }
    pub fn name(self) -> &'static str {
        match self {
            AmdArch::Gfx90a => "gfx90a",
            AmdArch::Gfx942 => "gfx942",
            AmdArch::Gfx950 => "gfx950",
            AmdArch::Gfx1100 => "gfx1100",
            AmdArch::Gfx1200 => "gfx1200",
        }
    }
    /// CDNA runs waves of 64 lanes; RDNA 3 and 4 run 32 (their native size, as HIP compiles them).
    pub fn wave_size(self) -> u32 {
        match self {
            AmdArch::Gfx90a | AmdArch::Gfx942 | AmdArch::Gfx950 => 64,
            AmdArch::Gfx1100 | AmdArch::Gfx1200 => 32,
        }
    }
    /// LDS bytes one workgroup may allocate.
    pub fn lds_bytes(self) -> u32 {
        match self {
            AmdArch::Gfx950 => 160 * 1024,
            _ => 64 * 1024,
        }
    }
    /// DPP `row_xmask` (lane ^ mask within a row of 16) exists from gfx10 on.
    pub(super) fn has_row_xmask(self) -> bool {
        matches!(self, AmdArch::Gfx1100 | AmdArch::Gfx1200)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_names_parse() {
        assert_eq!(AmdArch::parse("hip:gfx942"), Some(AmdArch::Gfx942));
        assert_eq!(AmdArch::parse("GFX1100"), Some(AmdArch::Gfx1100));
        assert_eq!(AmdArch::parse("sm_90"), None);
        assert_eq!(AmdArch::Gfx90a.wave_size(), 64);
        assert_eq!(AmdArch::Gfx1200.wave_size(), 32);
    }
}
