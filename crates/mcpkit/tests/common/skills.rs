//! Skills for the Skills extension's tests: `pdf-processing` (files in two subdirectories) and
//! `acme/billing/refunds` (under a prefix), and a server that serves them.

use mcpkit::server::extensions::skills::{SkillDef, Skills};
use mcpkit::Server;

pub const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract PDF text\nmetadata:\n  version: \"2\"\n---\n\n# PDF\n\nSee references/FORMS.md.\n";
pub const FORMS_MD: &str = "# Forms\n";
pub const EXTRACT_PY: &str = "print('x')\n";
pub const REFUNDS_MD: &str = "---\nname: refunds\ndescription: Refund requests\n---\n\nBe kind.\n";

pub fn pdf() -> SkillDef {
    SkillDef::new("pdf-processing", PDF_MD)
        .file("references/FORMS.md", FORMS_MD)
        .file("scripts/extract.py", EXTRACT_PY)
}

pub fn skills() -> Skills {
    Skills::new()
        .skill(pdf())
        .unwrap()
        .skill(SkillDef::new("acme/billing/refunds", REFUNDS_MD))
        .unwrap()
}

pub fn server() -> Server {
    Server::builder().extension(skills()).build()
}
