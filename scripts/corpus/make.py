#!/usr/bin/python3
"""Order files as outside producers write them, and what each must import.

Writes test/fixtures/corpus/: each file, and manifest.json recording for each the producer and
its version, the import options it is read with, and what `orders import --dry-run --json` must
say of it (rows, valid, invalid, totals by currency, the sheet and header line), or the one-line
refusal it must get. test/import/readers/corpus.test.ts imports every file against a sandbox
(docs/order-files.md, "Files from other producers").

Run with Debian's python and packages (PyPI is not needed):
    apt-get install python3-openpyxl python3-xlsxwriter python3-pandas libreoffice-calc-nogui
    /usr/bin/python3 scripts/corpus/make.py

The product codes are of the sandbox catalog the tests use (seed 7, 120 products):
AMZ-US-00000 (USD, open 1.00-100.00), BKS-US-00107 (USD, fixed 25/50/...),
AMZ-ES-00078 (EUR, open 1.00-500.00), BKS-JP-00026 (JPY, open 1000-10000).
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

import openpyxl
import pandas
import xlsxwriter
from openpyxl.styles import Font

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "fixtures", "corpus")

USD_OPEN = "AMZ-US-00000"
USD_FIXED = "BKS-US-00107"
EUR_OPEN = "AMZ-ES-00078"
JPY_OPEN = "BKS-JP-00026"
DECIMALS = {"USD": 2, "EUR": 2, "JPY": 0}
CURRENCY = {USD_OPEN: "USD", USD_FIXED: "USD", EUR_OPEN: "EUR", JPY_OPEN: "JPY"}

# Three rows in three currencies: the amounts as a person types them (25, 12.5, 1000).
MIXED = [
    ("ana@example.com", USD_OPEN, 25, "E-1"),
    ("ben@example.com", EUR_OPEN, 12.5, "E-2"),
    ("chi@example.com", JPY_OPEN, 1000, "E-3"),
]


def soffice_version():
    out = subprocess.run(["soffice", "--version"], capture_output=True, text=True).stdout
    return " ".join(out.split()[:2])


VERSIONS = {
    "openpyxl": f"openpyxl {openpyxl.__version__}",
    "xlsxwriter": f"xlsxwriter {xlsxwriter.__version__}",
    "pandas": f"pandas {pandas.__version__}",
    "python": f"python {sys.version.split()[0]}",
}

manifest = []


def totals(rows):
    """Face values summed by currency, written in the currency's minor units."""
    sums = {}
    for _, code, value, *_ in rows:
        cur = CURRENCY[code]
        sums[cur] = sums.get(cur, Decimal(0)) + Decimal(str(value))
    return {c: {"face_value": f"{v:.{DECIMALS[c]}f}"} for c, v in sorted(sums.items())}


def record(name, producer, what, expect, args=()):
    manifest.append(
        {"file": name, "producer": producer, "what": what, "args": list(args), "expect": expect}
    )


def imports(rows, **file):
    """What a file of these rows, all valid, must import as."""
    n = len(rows)
    if "sheet" in file:
        file = {"hidden_sheets_skipped": [], "header_line": 1, "skipped_lines": []} | file
        file = {"totals_rows_left_out": []} | file
    return {"code": 0, "rows": n, "valid": n, "invalid": 0, "totals": totals(rows), "file": file}


def refused(message, line=None):
    """The one-line refusal a file must get (exit 2): its stable part, and its line."""
    return {"code": 2, "error": {"line": line, "message": message}}


def path(name):
    return os.path.join(OUT, name)


# ---- openpyxl -------------------------------------------------------------------------------


def openpyxl_finance():
    """A finance team's workbook: hidden lookup sheet first, merged title, a subtitle, currency
    formats, e-mails with trailing spaces, a totals row with a SUM (openpyxl keeps no value)."""
    book = openpyxl.Workbook()
    lookup = book.active
    lookup.title = "Lookup"
    lookup.append(["code", "name"])
    lookup.append([USD_OPEN, "Amazon US"])
    lookup.sheet_state = "hidden"
    sheet = book.create_sheet("Orders")
    sheet.append(["Q4 gift cards: sales team"])
    sheet.merge_cells("A1:D1")
    sheet["A1"].font = Font(bold=True, size=14)
    sheet.append(["exported 2026-11-20", None, "by finance"])
    sheet.append(["Email Address", "SKU", "Amount", "Employee ID"])
    rows = [
        ("ana@example.com  ", USD_OPEN, 25, "E-1"),
        ("ben@example.com ", USD_OPEN, 12.5, "E-2"),
        ("chi@example.com   ", USD_OPEN, 100, "E-3"),
    ]
    for row in rows:
        sheet.append(list(row))
    sheet.append(["Total", None, "=SUM(C4:C6)", None])
    for r in range(4, 8):
        sheet.cell(row=r, column=3).number_format = '"$"#,##0.00'
    book.save(path("openpyxl-finance.xlsx"))
    expect = imports(
        rows,
        sheet="Orders",
        hidden_sheets_skipped=["Lookup"],
        header_line=3,
        skipped_lines=[1, 2],
        totals_rows_left_out=[{"line": 7, "label": "Total"}],
    )
    what = "hidden first sheet, merged title, subtitle, currency formats, trailing spaces, totals"
    record("openpyxl-finance.xlsx", VERSIONS["openpyxl"], what, expect)


def openpyxl_formats():
    """Amounts under Excel's currency and accounting formats, in three currencies."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Orders"
    sheet.append(["email", "product_code", "face_value", "reference"])
    formats = ['"$"#,##0.00', '#,##0.00\\ [$€-407]', '[$¥-411]#,##0']
    for row, fmt in zip(MIXED, formats):
        sheet.append(list(row))
        sheet.cell(row=sheet.max_row, column=3).number_format = fmt
    book.save(path("openpyxl-currency-formats.xlsx"))
    expect = imports(MIXED, sheet="Orders")
    record("openpyxl-currency-formats.xlsx", VERSIONS["openpyxl"], "$, € and ¥ formats", expect)


def openpyxl_currency_header():
    """A finance sheet's header names the currency: `Amount (USD)`."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Payouts"
    sheet.append(["Email", "Product Code", "Amount (USD)"])
    rows = [("ana@example.com", USD_OPEN, 25), ("ben@example.com", USD_FIXED, 50)]
    for row in rows:
        sheet.append(list(row))
    book.save(path("openpyxl-currency-header.xlsx"))
    record(
        "openpyxl-currency-header.xlsx",
        VERSIONS["openpyxl"],
        "header `Amount (USD)` read as the face value",
        imports(rows, sheet="Payouts"),
    )


def openpyxl_currency_mismatch():
    """`Value EUR` over a row whose product is in USD: refused naming both."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Orders"
    sheet.append(["Email", "Product", "Value EUR"])
    sheet.append(["ana@example.com", EUR_OPEN, 20])
    sheet.append(["ben@example.com", USD_OPEN, 20])
    book.save(path("openpyxl-currency-mismatch.xlsx"))
    message = f'the header "Value EUR" says EUR, but product {USD_OPEN} is in USD'
    record(
        "openpyxl-currency-mismatch.xlsx",
        VERSIONS["openpyxl"],
        "header `Value EUR`, one row of a USD product",
        refused(message, line=3),
    )


# ---- pandas ---------------------------------------------------------------------------------


def frame():
    return pandas.DataFrame(MIXED, columns=["email", "product_code", "face_value", "reference"])


def pandas_files():
    """DataFrame.to_excel as data teams call it: through openpyxl (pandas 2+ default) with and
    without the index, and through xlsxwriter (pandas 1.x's default when it is installed)."""
    df = frame()
    engine = f'{VERSIONS["pandas"]} ({VERSIONS["openpyxl"]})'
    df.to_excel(path("pandas-index.xlsx"), sheet_name="Orders", engine="openpyxl")
    what = "to_excel with the index: an unnamed first column of 0, 1, 2"
    record("pandas-index.xlsx", engine, what, imports(MIXED, sheet="Orders"))
    df.to_excel(path("pandas-no-index.xlsx"), sheet_name="Orders", index=False, engine="openpyxl")
    record("pandas-no-index.xlsx", engine, "to_excel(index=False)", imports(MIXED, sheet="Orders"))
    engine = f'{VERSIONS["pandas"]} ({VERSIONS["xlsxwriter"]})'
    df.to_excel(path("pandas-xlsxwriter.xlsx"), index=False, engine="xlsxwriter")
    what = "to_excel(index=False, engine='xlsxwriter'), default sheet name"
    record("pandas-xlsxwriter.xlsx", engine, what, imports(MIXED, sheet="Sheet1"))
    df.to_csv(path("pandas-bom.csv"), index=False, encoding="utf-8-sig")
    what = "to_csv(encoding='utf-8-sig'): UTF-8 with BOM, as Excel's CSV UTF-8"
    record("pandas-bom.csv", VERSIONS["pandas"], what, imports(MIXED))


def unicode_text():
    """Excel's "Unicode Text": UTF-16LE with its BOM, tab-separated, CRLF."""
    text = io.StringIO()
    writer = csv.writer(text, delimiter="\t", lineterminator="\r\n")
    writer.writerow(["Email Address", "Product Code", "Amount", "Reference"])
    for row in MIXED:
        writer.writerow(row)
    data = b"\xff\xfe" + text.getvalue().encode("utf-16-le")
    with open(path("unicode-text.txt"), "wb") as f:
        f.write(data)
    what = "Excel's Unicode Text: UTF-16LE with BOM, tabs, CRLF (written by python's codecs)"
    record("unicode-text.txt", VERSIONS["python"], what, imports(MIXED))


# ---- xlsxwriter -----------------------------------------------------------------------------


def xlsxwriter_inline():
    """constant_memory: xlsxwriter writes every string inline (t="inlineStr"), no shared
    strings table."""
    book = xlsxwriter.Workbook(path("xlsxwriter-inline.xlsx"), {"constant_memory": True})
    sheet = book.add_worksheet("Orders")
    sheet.write_row(0, 0, ["email", "product_code", "face_value", "reference"])
    for r, row in enumerate(MIXED, start=1):
        sheet.write_row(r, 0, row)
    book.close()
    record("xlsxwriter-inline.xlsx", VERSIONS["xlsxwriter"], "inline strings", imports(MIXED, sheet="Orders"))


def xlsxwriter_formulas():
    """Formulas with cached values in columns the import does not read: fine."""
    book = xlsxwriter.Workbook(path("xlsxwriter-formulas.xlsx"))
    sheet = book.add_worksheet("Orders")
    sheet.write_row(0, 0, ["email", "product_code", "face_value", "Fee", "Gross"])
    rows = [("ana@example.com", USD_OPEN, 20), ("ben@example.com", USD_OPEN, 40)]
    for r, row in enumerate(rows, start=1):
        sheet.write_row(r, 0, row)
        sheet.write_formula(r, 3, f"=C{r + 1}*0.05", None, row[2] * 0.05)
        sheet.write_formula(r, 4, f"=C{r + 1}+D{r + 1}", None, row[2] * 1.05)
    book.close()
    expect = imports(rows, sheet="Orders")
    what = "formulas with cached values in two unused columns"
    record("xlsxwriter-formulas.xlsx", VERSIONS["xlsxwriter"], what, expect)


def xlsxwriter_formula_amount():
    """A formula in the face value column: refused naming the cell and what to do."""
    book = xlsxwriter.Workbook(path("xlsxwriter-formula-amount.xlsx"))
    sheet = book.add_worksheet("Orders")
    sheet.write_row(0, 0, ["email", "product_code", "face_value"])
    sheet.write_row(1, 0, ["ana@example.com", USD_OPEN, 20])
    sheet.write_row(2, 0, ["ben@example.com", USD_OPEN])
    sheet.write_formula(2, 2, "=C2+5", None, 25)
    book.close()
    message = "cell C3 holds a formula (=C2+5)"
    what = "a formula (cached 25) in the face value column"
    record("xlsxwriter-formula-amount.xlsx", VERSIONS["xlsxwriter"], what, refused(message, line=3))


def xlsxwriter_large():
    """5,000 rows through constant_memory, as a script exporting a big list writes them."""
    book = xlsxwriter.Workbook(path("xlsxwriter-5000.xlsx"), {"constant_memory": True})
    sheet = book.add_worksheet("Orders")
    sheet.write_row(0, 0, ["email", "product_code", "face_value", "reference"])
    rows = []
    for i in range(5000):
        row = (f"user{i}@example.com", USD_OPEN, 1 + i % 100 + (i % 4) * 0.25, f"R-{i}")
        if Decimal(str(row[2])) > 100:
            row = (row[0], row[1], 100, row[3])
        rows.append(row)
        sheet.write_row(i + 1, 0, row)
    book.close()
    what = "5,000 rows, constant_memory (inline strings)"
    record("xlsxwriter-5000.xlsx", VERSIONS["xlsxwriter"], what, imports(rows, sheet="Orders"))


# ---- LibreOffice ----------------------------------------------------------------------------


def libreoffice_files():
    """LibreOffice saves a workbook (title row, totals with a cached SUM) as .xlsx and .ods, and
    as CSV the way a German locale does: `;` between cells, `,` as the decimal mark."""
    work = tempfile.mkdtemp(prefix="corpus-lo-")
    try:
        source = os.path.join(work, "lo-orders.xlsx")
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = "Bestellungen"
        sheet.append(["Gutscheine Q4"])
        sheet.append(["E-Mail", "Product Code", "Amount", "Reference"])
        for row in MIXED:
            sheet.append(list(row))
        sheet.append(["Total", None, "=SUM(C3:C5)", None])
        book.save(source)
        version = soffice_version()
        for kind in ("xlsx", "ods"):
            convert(work, source, kind, "de-DE")
            shutil.copy(os.path.join(work, "out", f"lo-orders.{kind}"), path(f"libreoffice.{kind}"))
            expect = imports(
                MIXED,
                sheet="Bestellungen",
                header_line=2,
                skipped_lines=[1],
                totals_rows_left_out=[{"line": 6, "label": "Total"}],
            )
            what = f"saved as .{kind} by soffice --convert-to: title row, totals row (SUM)"
            record(f"libreoffice.{kind}", version, what, expect)
        # CSV filter options: `;` (59), `"` (34), UTF-8 (76), from line 1; cells as shown.
        convert(work, source, "csv:Text - txt - csv (StarCalc):59,34,76,1,,0,false,true,true", "de-DE")
        shutil.copy(os.path.join(work, "out", "lo-orders.csv"), path("libreoffice-semicolon.csv"))
        expect = imports(
            MIXED,
            header_line=2,
            skipped_lines=[1],
            totals_rows_left_out=[{"line": 6, "label": "Total"}],
        )
        what = "CSV with `;` and decimal commas (German locale), title and totals rows"
        record("libreoffice-semicolon.csv", version, what, expect, args=["--delimiter", ";"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def convert(work, source, target, locale):
    profile = os.path.join(work, "profile")
    os.makedirs(profile, exist_ok=True)
    xcu = os.path.join(profile, "user", "registrymodifications.xcu")
    os.makedirs(os.path.dirname(xcu), exist_ok=True)
    # The document locale decides the decimal mark of a CSV export.
    with open(xcu, "w") as f:
        f.write(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            '<item oor:path="/org.openoffice.Setup/L10N"><prop oor:name="ooSetupSystemLocale" '
            f'oor:op="fuse"><value>{locale}</value></prop></item>\n'
            "</oor:items>\n"
        )
    command = [
        "soffice",
        f"-env:UserInstallation=file://{profile}",
        "--headless",
        "--convert-to",
        target,
        "--outdir",
        os.path.join(work, "out"),
        source,
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    openpyxl_finance()
    openpyxl_formats()
    openpyxl_currency_header()
    openpyxl_currency_mismatch()
    pandas_files()
    unicode_text()
    xlsxwriter_inline()
    xlsxwriter_formulas()
    xlsxwriter_formula_amount()
    xlsxwriter_large()
    libreoffice_files()
    notes = {
        "xlsxwriter_inline_strings": "xlsxwriter writes inline strings only with constant_memory",
        "generated_by": "scripts/corpus/make.py",
    }
    with open(path("manifest.json"), "w") as f:
        json.dump({"notes": notes, "files": manifest}, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
