"""The words citerender writes itself, in the document's language: section headings (Sources,
Notes, Contents), the PDF footer ("Page 1 of 5"), the names of numbered figures, tables and
equations and code listings (one and several: "Figure 1", "Figures 1, 3 and 5", "Equation 2",
"Listing 1"),
"(cont.)" on a continued slide, back-link titles and the text of an image that cannot be shown.

Every writer takes them from the :class:`Labels` of :func:`labels_for`, and nothing else spells
them. A *declared* language (the ``lang`` option, the input's ``<html lang>`` or ``lang:``)
picks the set of its primary language subtag (Chinese: of its script, Simplified or Traditional); a
detected one keeps English, as detection knows only the script (Latin text is taken for
English), and so does a language without a set. The words are each language's usual terms in
print (Duden and Chicago conventions, GOST's "Рисунок 1 —" caption, French spacing before a
colon), written with placeholders where the word order differs ("Seite {page} von {pages}",
"図{number}").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from string import Formatter
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from renderers.document import CrossRefJoiner, CrossRefKind
    from renderers.language import Language

__all__ = ["ENGLISH", "LABELS", "Labels", "PagePart", "labels_for"]

#: One piece of the page footer (:meth:`Labels.page_parts`): text, or the current page number,
#: or the number of pages.
PagePart = tuple[Literal["text", "page", "pages"], str]


@dataclass(frozen=True)
class Labels:
    """The words of one language. Fields with ``{…}`` are templates; the rest are plain text."""

    #: The heading of the Sources section (unless the ``sources_heading`` option names one).
    sources: str = "Sources"
    #: The heading of the author's notes.
    notes: str = "Notes"
    #: The heading of a note style's notes when the author's Notes are there too.
    citation_notes: str = "Citation notes"
    #: The heading of the table of contents.
    contents: str = "Contents"
    #: The heading of the abstract in the title block (front matter ``abstract:``).
    abstract: str = "Abstract"
    #: The PDF footer: ``{page}`` the page's number, ``{pages}`` the number of pages.
    page: str = "Page {page} of {pages}"
    #: A numbered figure and table, as references and captions name them.
    figure: str = "Figure {number}"
    table: str = "Table {number}"
    #: A numbered displayed equation, as references name it (it has no caption).
    equation: str = "Equation {number}"
    #: A numbered code listing, as references and its caption above the code name it.
    listing: str = "Listing {number}"
    #: Several figures or tables, as a group of references names them ("Figures 1–3"): the
    #: plural name before ``{numbers}`` (the same word in Chinese, Japanese and Korean).
    figures: str = "Figures {numbers}"
    tables: str = "Tables {numbers}"
    equations: str = "Equations {numbers}"
    listings: str = "Listings {numbers}"
    #: What joins the numbers (and names) of a group: "1, 3 and 5", "1–3".
    separator: str = ", "
    conjunction: str = " and "
    range: str = "\u2013"
    #: What starts a numbered caption: ``{name}`` is the figure's or table's name.
    caption: str = "{name}:"
    #: Marks a slide, paragraph or cell continued from the one before.
    continued: str = "(cont.)"
    #: What joins ``continued`` to the text it follows or precedes ("" in Chinese, Japanese).
    space: str = " "
    #: The titles (tooltips) of a Sources entry's and a note's back-link.
    backlink: str = "Back to the first citation"
    note_backlink: str = "Back to the text"
    #: An image that cannot be shown, with its description and without one.
    image_described: str = "[Image: {alt}]"
    image: str = "[Image]"
    #: The end of a slide footer that lists only some of the sources a slide cites.
    more: str = "+{count} more"
    #: The title of a source whose row has no title, URL or file name.
    source: str = "Source {sid}"
    #: Where in a source it is cited, in its Sources entry: one page, and several or a range
    #: (``{pages}``: "3", "3–4, 7"). The words are CSL's locale terms for "page".
    cited_page: str = "page {pages}"
    cited_pages: str = "pages {pages}"
    #: The title of a document that has none where one is required (HTML ``<title>``, the PDF).
    untitled: str = "Report"

    def numbered(self, kind: CrossRefKind, number: int) -> str:
        """"Figure 1", "Table 2", "Equation 3", "Listing 4": a numbered figure, table,
        equation or listing, as references name it."""
        name = {"fig": self.figure, "tbl": self.table, "eq": self.equation,
                "lst": self.listing}[kind]
        return name.format(number=number)

    def names_lead(self, kind: CrossRefKind) -> str:
        """"Figures ": the plural name a group's numbers follow."""
        names = {"fig": self.figures, "tbl": self.tables, "eq": self.equations,
                 "lst": self.listings}[kind]
        if not names.endswith("{numbers}"):
            raise ValueError(f"the plural name {names!r} must end with {{numbers}}")
        return names.removesuffix("{numbers}")

    def joiner(self, joiner: CrossRefJoiner) -> str:
        """The words between a group's references: ", ", " and ", "–" (nothing first)."""
        if joiner == "list":
            return self.separator
        if joiner == "last":
            return self.conjunction
        return self.range if joiner == "range" else ""

    def caption_lead(self, kind: CrossRefKind, number: int) -> str:
        """"Figure 1:": what starts the caption of a numbered figure, table or listing (writers
        add the space after it)."""
        return self.caption.format(name=self.numbered(kind, number))

    def image_text(self, described: str) -> str:
        """"[Image: alt]", or "[Image]" when there is no description."""
        return self.image_described.format(alt=described) if described else self.image

    def page_parts(self) -> Iterator[PagePart]:
        """The footer's template in pieces, for engines that count the pages themselves
        (CSS ``counter(pages)``, Typst's ``counter(page).final()``): ``("text", "Page ")``,
        ``("page", "")``, ``("text", " of ")``, ``("pages", "")``; empty text is left out."""
        for text, field, _, _ in Formatter().parse(self.page):
            if text:
                yield "text", text
            if field == "page":
                yield "page", ""
            elif field == "pages":
                yield "pages", ""
            elif field is not None:
                raise ValueError(f"unknown field {{{field}}} in {self.page!r}")


#: The words of an English document, of one whose language was only detected, and of one in a
#: language without a set of its own.
ENGLISH = Labels()

#: Each language's words, by primary language subtag (Chinese by script: zh-Hans, zh-Hant).
LABELS: dict[str, Labels] = {
    "en": ENGLISH,
    "de": Labels(
        sources="Quellen", notes="Anmerkungen", citation_notes="Nachweise", contents="Inhalt",
        page="Seite {page} von {pages}", figure="Abbildung {number}", table="Tabelle {number}",
        continued="(Forts.)", backlink="Zurück zur ersten Zitierstelle",
        note_backlink="Zurück zum Text", image_described="[Bild: {alt}]", image="[Bild]",
        more="+{count} weitere", source="Quelle {sid}",
        untitled="Bericht", abstract="Zusammenfassung",
        figures="Abbildungen {numbers}", tables="Tabellen {numbers}", conjunction=" und ",
        equation="Gleichung {number}", equations="Gleichungen {numbers}",
        listing="Listing {number}", listings="Listings {numbers}",
        cited_page="Seite {pages}", cited_pages="Seiten {pages}",
    ),
    "fr": Labels(
        sources="Sources", notes="Notes", citation_notes="Notes bibliographiques",
        contents="Table des matières", page="Page {page} sur {pages}",
        figure="Figure {number}", table="Tableau {number}", caption="{name}\u00a0:",
        continued="(suite)", backlink="Retour à la première citation",
        note_backlink="Retour au texte", image_described="[Image\u00a0: {alt}]",
        image="[Image]", more="+{count} autres", source="Source {sid}",
        untitled="Rapport", abstract="Résumé",
        figures="Figures {numbers}", tables="Tableaux {numbers}", conjunction=" et ",
        equation="Équation {number}", equations="Équations {numbers}",
        listing="Listing {number}", listings="Listings {numbers}",
        cited_page="page {pages}", cited_pages="pages {pages}",
    ),
    "es": Labels(
        sources="Fuentes", notes="Notas", citation_notes="Notas bibliográficas",
        contents="Índice", page="Página {page} de {pages}", figure="Figura {number}",
        table="Tabla {number}", continued="(cont.)", backlink="Volver a la primera cita",
        note_backlink="Volver al texto", image_described="[Imagen: {alt}]", image="[Imagen]",
        more="+{count} más", source="Fuente {sid}",
        untitled="Informe", abstract="Resumen",
        figures="Figuras {numbers}", tables="Tablas {numbers}", conjunction=" y ",
        equation="Ecuación {number}", equations="Ecuaciones {numbers}",
        listing="Listado {number}", listings="Listados {numbers}",
        cited_page="página {pages}", cited_pages="páginas {pages}",
    ),
    "it": Labels(
        sources="Fonti", notes="Note", citation_notes="Note bibliografiche", contents="Indice",
        page="Pagina {page} di {pages}", figure="Figura {number}", table="Tabella {number}",
        continued="(segue)", backlink="Torna alla prima citazione",
        note_backlink="Torna al testo", image_described="[Immagine: {alt}]",
        image="[Immagine]", more="+{count} altre", source="Fonte {sid}",
        untitled="Rapporto", abstract="Sommario",
        figures="Figure {numbers}", tables="Tabelle {numbers}", conjunction=" e ",
        equation="Equazione {number}", equations="Equazioni {numbers}",
        listing="Listato {number}", listings="Listati {numbers}",
        cited_page="pagina {pages}", cited_pages="pagine {pages}",
    ),
    "pt": Labels(
        sources="Fontes", notes="Notas", citation_notes="Notas bibliográficas",
        contents="Índice", page="Página {page} de {pages}", figure="Figura {number}",
        table="Tabela {number}", continued="(cont.)", backlink="Voltar à primeira citação",
        note_backlink="Voltar ao texto", image_described="[Imagem: {alt}]", image="[Imagem]",
        more="+{count} mais", source="Fonte {sid}",
        untitled="Relatório", abstract="Resumo",
        figures="Figuras {numbers}", tables="Tabelas {numbers}", conjunction=" e ",
        equation="Equação {number}", equations="Equações {numbers}",
        listing="Listagem {number}", listings="Listagens {numbers}",
        cited_page="página {pages}", cited_pages="páginas {pages}",
    ),
    "nl": Labels(
        sources="Bronnen", notes="Noten", citation_notes="Bronvermeldingen", contents="Inhoud",
        page="Pagina {page} van {pages}", figure="Figuur {number}", table="Tabel {number}",
        continued="(vervolg)", backlink="Terug naar de eerste verwijzing",
        note_backlink="Terug naar de tekst", image_described="[Afbeelding: {alt}]",
        image="[Afbeelding]", more="+{count} meer", source="Bron {sid}",
        untitled="Rapport", abstract="Samenvatting",
        figures="Figuren {numbers}", tables="Tabellen {numbers}", conjunction=" en ",
        equation="Vergelijking {number}", equations="Vergelijkingen {numbers}",
        listing="Codefragment {number}", listings="Codefragmenten {numbers}",
        cited_page="pagina {pages}", cited_pages="pagina’s {pages}",
    ),
    "sv": Labels(
        sources="Källor", notes="Noter", citation_notes="Källhänvisningar",
        contents="Innehåll", page="Sida {page} av {pages}", figure="Figur {number}",
        table="Tabell {number}", continued="(forts.)",
        backlink="Tillbaka till första hänvisningen", note_backlink="Tillbaka till texten",
        image_described="[Bild: {alt}]", image="[Bild]", more="+{count} till",
        source="Källa {sid}",
        untitled="Rapport", abstract="Sammanfattning",
        figures="Figurer {numbers}", tables="Tabeller {numbers}", conjunction=" och ",
        equation="Ekvation {number}", equations="Ekvationer {numbers}",
        listing="Kodlistning {number}", listings="Kodlistningar {numbers}",
        cited_page="sida {pages}", cited_pages="sidor {pages}",
    ),
    "da": Labels(
        sources="Kilder", notes="Noter", citation_notes="Kildehenvisninger", contents="Indhold",
        page="Side {page} af {pages}", figure="Figur {number}", table="Tabel {number}",
        continued="(fortsat)", backlink="Tilbage til første henvisning",
        note_backlink="Tilbage til teksten", image_described="[Billede: {alt}]",
        image="[Billede]", more="+{count} flere", source="Kilde {sid}",
        untitled="Rapport", abstract="Resumé",
        figures="Figurer {numbers}", tables="Tabeller {numbers}", conjunction=" og ",
        equation="Ligning {number}", equations="Ligninger {numbers}",
        listing="Kodeudsnit {number}", listings="Kodeudsnit {numbers}",
        cited_page="side {pages}", cited_pages="sider {pages}",
    ),
    "nb": Labels(
        sources="Kilder", notes="Noter", citation_notes="Kildehenvisninger", contents="Innhold",
        page="Side {page} av {pages}", figure="Figur {number}", table="Tabell {number}",
        continued="(forts.)", backlink="Tilbake til første henvisning",
        note_backlink="Tilbake til teksten", image_described="[Bilde: {alt}]",
        image="[Bilde]", more="+{count} flere", source="Kilde {sid}",
        untitled="Rapport", abstract="Sammendrag",
        figures="Figurer {numbers}", tables="Tabeller {numbers}", conjunction=" og ",
        equation="Likning {number}", equations="Likninger {numbers}",
        listing="Kodeutdrag {number}", listings="Kodeutdrag {numbers}",
        cited_page="side {pages}", cited_pages="sider {pages}",
    ),
    "fi": Labels(
        sources="Lähteet", notes="Huomautukset", citation_notes="Lähdeviitteet",
        contents="Sisällys", page="Sivu {page}/{pages}", figure="Kuva {number}",
        table="Taulukko {number}", caption="{name}.", continued="(jatkuu)",
        backlink="Takaisin ensimmäiseen viittaukseen", note_backlink="Takaisin tekstiin",
        image_described="[Kuva: {alt}]", image="[Kuva]", more="+{count} muuta",
        source="Lähde {sid}",
        untitled="Raportti", abstract="Tiivistelmä",
        figures="Kuvat {numbers}", tables="Taulukot {numbers}", conjunction=" ja ",
        equation="Yhtälö {number}", equations="Yhtälöt {numbers}",
        listing="Listaus {number}", listings="Listaukset {numbers}",
        cited_page="sivu {pages}", cited_pages="sivut {pages}",
    ),
    "pl": Labels(
        sources="Źródła", notes="Przypisy", citation_notes="Przypisy bibliograficzne",
        contents="Spis treści", page="Strona {page} z {pages}", figure="Rysunek {number}",
        table="Tabela {number}", caption="{name}.", continued="(cd.)",
        backlink="Powrót do pierwszego cytowania", note_backlink="Powrót do tekstu",
        image_described="[Obraz: {alt}]", image="[Obraz]", more="+{count} więcej",
        source="Źródło {sid}",
        untitled="Raport", abstract="Streszczenie",
        figures="Rysunki {numbers}", tables="Tabele {numbers}", conjunction=" i ",
        equation="Równanie {number}", equations="Równania {numbers}",
        listing="Listing {number}", listings="Listingi {numbers}",
        cited_page="strona {pages}", cited_pages="strony {pages}",
    ),
    "cs": Labels(
        sources="Zdroje", notes="Poznámky", citation_notes="Bibliografické poznámky",
        contents="Obsah", page="Strana {page} z {pages}", figure="Obrázek {number}",
        table="Tabulka {number}", continued="(pokr.)", backlink="Zpět na první citaci",
        note_backlink="Zpět na text", image_described="[Obrázek: {alt}]", image="[Obrázek]",
        more="+{count} další", source="Zdroj {sid}",
        untitled="Zpráva", abstract="Abstrakt",
        figures="Obrázky {numbers}", tables="Tabulky {numbers}", conjunction=" a ",
        equation="Rovnice {number}", equations="Rovnice {numbers}",
        listing="Výpis {number}", listings="Výpisy {numbers}",
        cited_page="strana {pages}", cited_pages="strany {pages}",
    ),
    "ru": Labels(
        sources="Источники", notes="Примечания", citation_notes="Библиографические примечания",
        contents="Содержание", page="Страница {page} из {pages}", figure="Рисунок {number}",
        table="Таблица {number}", caption="{name} \u2014", continued="(продолжение)",
        backlink="Вернуться к первой ссылке", note_backlink="Вернуться к тексту",
        image_described="[Изображение: {alt}]", image="[Изображение]", more="+{count} ещё",
        source="Источник {sid}",
        untitled="Отчёт", abstract="Аннотация",
        figures="Рисунки {numbers}", tables="Таблицы {numbers}", conjunction=" и ",
        equation="Уравнение {number}", equations="Уравнения {numbers}",
        listing="Листинг {number}", listings="Листинги {numbers}",
        cited_page="страница {pages}", cited_pages="страницы {pages}",
    ),
    "uk": Labels(
        sources="Джерела", notes="Примітки", citation_notes="Бібліографічні примітки",
        contents="Зміст", page="Сторінка {page} з {pages}", figure="Рисунок {number}",
        table="Таблиця {number}", caption="{name} \u2014", continued="(продовження)",
        backlink="Повернутися до першого посилання", note_backlink="Повернутися до тексту",
        image_described="[Зображення: {alt}]", image="[Зображення]", more="+{count} ще",
        source="Джерело {sid}",
        untitled="Звіт", abstract="Анотація",
        figures="Рисунки {numbers}", tables="Таблиці {numbers}", conjunction=" і ",
        equation="Рівняння {number}", equations="Рівняння {numbers}",
        listing="Лістинг {number}", listings="Лістинги {numbers}",
        cited_page="сторінка {pages}", cited_pages="сторінки {pages}",
    ),
    "el": Labels(
        sources="Πηγές", notes="Σημειώσεις", citation_notes="Βιβλιογραφικές σημειώσεις",
        contents="Περιεχόμενα", page="Σελίδα {page} από {pages}", figure="Σχήμα {number}",
        table="Πίνακας {number}", continued="(συνέχεια)",
        backlink="Επιστροφή στην πρώτη παραπομπή", note_backlink="Επιστροφή στο κείμενο",
        image_described="[Εικόνα: {alt}]", image="[Εικόνα]", more="+{count} ακόμη",
        source="Πηγή {sid}",
        untitled="Αναφορά", abstract="Περίληψη",
        figures="Σχήματα {numbers}", tables="Πίνακες {numbers}", conjunction=" και ",
        equation="Εξίσωση {number}", equations="Εξισώσεις {numbers}",
        listing="Κώδικας {number}", listings="Κώδικες {numbers}",
        cited_page="σελίδα {pages}", cited_pages="σελίδες {pages}",
    ),
    "tr": Labels(
        sources="Kaynaklar", notes="Notlar", citation_notes="Kaynak notları",
        contents="İçindekiler", page="Sayfa {page}/{pages}", figure="Şekil {number}",
        table="Tablo {number}", caption="{name}.", continued="(devam)",
        backlink="İlk atıfa dön", note_backlink="Metne dön", image_described="[Görsel: {alt}]",
        image="[Görsel]", more="+{count} daha", source="Kaynak {sid}",
        untitled="Rapor", abstract="Özet",
        figures="Şekiller {numbers}", tables="Tablolar {numbers}", conjunction=" ve ",
        equation="Denklem {number}", equations="Denklemler {numbers}",
        listing="Kod {number}", listings="Kodlar {numbers}",
        cited_page="sayfa {pages}", cited_pages="sayfalar {pages}",
    ),
    "ar": Labels(
        sources="المصادر", notes="الملاحظات", citation_notes="حواشي المصادر",
        contents="المحتويات", page="صفحة {page} من {pages}", figure="شكل {number}",
        table="جدول {number}", continued="(تابع)", backlink="العودة إلى الاستشهاد الأول",
        note_backlink="العودة إلى النص", image_described="[صورة: {alt}]", image="[صورة]",
        more="+{count} أخرى", source="مصدر {sid}",
        untitled="تقرير", abstract="ملخص",
        figures="الأشكال {numbers}", tables="الجداول {numbers}",
        conjunction=" و", separator="\u060c ",
        equation="معادلة {number}", equations="المعادلات {numbers}",
        listing="شيفرة {number}", listings="الشيفرات {numbers}",
        cited_page="صفحة {pages}", cited_pages="صفحات {pages}",
    ),
    "he": Labels(
        sources="מקורות", notes="הערות", citation_notes="הערות ביבליוגרפיות",
        contents="תוכן העניינים", page="עמוד {page} מתוך {pages}", figure="איור {number}",
        table="טבלה {number}", continued="(המשך)", backlink="חזרה להפניה הראשונה",
        note_backlink="חזרה לטקסט", image_described="[תמונה: {alt}]", image="[תמונה]",
        more="+{count} נוספים", source="מקור {sid}",
        untitled="דוח", abstract="תקציר",
        figures="איורים {numbers}", tables="טבלאות {numbers}", conjunction=" ו\u05be",
        equation="משוואה {number}", equations="משוואות {numbers}",
        listing="קטע קוד {number}", listings="קטעי קוד {numbers}",
        cited_page="עמוד {pages}", cited_pages="עמודים {pages}",
    ),
    "fa": Labels(
        sources="منابع", notes="یادداشت\u200cها", citation_notes="یادداشت\u200cهای منابع",
        contents="فهرست مطالب", page="صفحهٔ {page} از {pages}", figure="شکل {number}",
        table="جدول {number}", continued="(ادامه)", backlink="بازگشت به نخستین ارجاع",
        note_backlink="بازگشت به متن", image_described="[تصویر: {alt}]", image="[تصویر]",
        more="+{count} دیگر", source="منبع {sid}",
        untitled="گزارش", abstract="چکیده",
        figures="شکل\u200cهای {numbers}", tables="جدول\u200cهای {numbers}",
        conjunction=" و ", separator="\u060c ",
        equation="معادله {number}", equations="معادله\u200cهای {numbers}",
        listing="کد {number}", listings="کد\u200cهای {numbers}",
        cited_page="صفحه {pages}", cited_pages="صفحات {pages}",
    ),
    "hi": Labels(
        sources="स्रोत", notes="टिप्पणियाँ", citation_notes="स्रोत टिप्पणियाँ",
        contents="विषय-सूची", page="पृष्ठ {page} / {pages}", figure="चित्र {number}",
        table="तालिका {number}", continued="(जारी)", backlink="पहले उद्धरण पर वापस जाएँ",
        note_backlink="पाठ पर वापस जाएँ", image_described="[छवि: {alt}]", image="[छवि]",
        more="+{count} और", source="स्रोत {sid}",
        untitled="रिपोर्ट", abstract="सारांश",
        figures="चित्र {numbers}", tables="तालिकाएँ {numbers}", conjunction=" और ",
        equation="समीकरण {number}", equations="समीकरण {numbers}",
        listing="कोड सूची {number}", listings="कोड सूचियाँ {numbers}",
        cited_page="पृष्ठ {pages}", cited_pages="पृष्ठ {pages}",
    ),
    "ja": Labels(
        sources="出典", notes="注", citation_notes="出典注", contents="目次",
        page="{page} / {pages} ページ", figure="図{number}", table="表{number}",
        caption="{name}", continued="（続き）", space="", backlink="最初の引用箇所に戻る",
        note_backlink="本文に戻る", image_described="[画像: {alt}]", image="[画像]",
        more="ほか{count}件", source="出典{sid}",
        untitled="レポート", abstract="概要",
        figures="図{numbers}", tables="表{numbers}",
        conjunction="、", separator="、", range="\uff5e",
        equation="式{number}", equations="式{numbers}",
        listing="リスト{number}", listings="リスト{numbers}",
        cited_page="{pages}ページ", cited_pages="{pages}ページ",
    ),
    "zh-Hans": Labels(
        sources="来源", notes="注释", citation_notes="来源注释", contents="目录",
        page="第 {page} 页，共 {pages} 页", figure="图{number}", table="表{number}",
        caption="{name}", continued="（续）", space="", backlink="返回首次引用处",
        note_backlink="返回正文", image_described="[图片：{alt}]", image="[图片]",
        more="另{count}项", source="来源{sid}",
        untitled="报告", abstract="摘要",
        figures="图{numbers}", tables="表{numbers}", conjunction="和", separator="、",
        equation="公式{number}", equations="公式{numbers}",
        listing="代码{number}", listings="代码{numbers}",
        cited_page="第{pages}页", cited_pages="第{pages}页",
    ),
    "zh-Hant": Labels(
        sources="來源", notes="註釋", citation_notes="來源註釋", contents="目錄",
        page="第 {page} 頁，共 {pages} 頁", figure="圖{number}", table="表{number}",
        caption="{name}", continued="（續）", space="", backlink="返回首次引用處",
        note_backlink="返回正文", image_described="[圖片：{alt}]", image="[圖片]",
        more="另{count}項", source="來源{sid}",
        untitled="報告", abstract="摘要",
        figures="圖{numbers}", tables="表{numbers}", conjunction="和", separator="、",
        equation="公式{number}", equations="公式{numbers}",
        listing="程式碼{number}", listings="程式碼{numbers}",
        cited_page="第{pages}頁", cited_pages="第{pages}頁",
    ),
    "ko": Labels(
        sources="출처", notes="주석", citation_notes="출처 주석", contents="목차",
        page="{page} / {pages} 페이지", figure="그림 {number}", table="표 {number}",
        caption="{name}.", continued="(계속)", backlink="첫 인용 위치로 돌아가기",
        note_backlink="본문으로 돌아가기", image_described="[이미지: {alt}]", image="[이미지]",
        more="+{count}개 더", source="출처 {sid}",
        untitled="보고서", abstract="초록",
        figures="그림 {numbers}", tables="표 {numbers}", conjunction=" 및 ",
        equation="식 {number}", equations="식 {numbers}",
        listing="코드 {number}", listings="코드 {numbers}",
        cited_page="{pages}페이지", cited_pages="{pages}페이지",
    ),
}
#: Tags that name a language of :data:`LABELS` under another subtag.
_ALIASES = {"no": "nb", "iw": "he", "pes": "fa"}
#: The set of each regional Chinese face (:meth:`Language.declared_cjk_face`).
_CHINESE = {"SC": "zh-Hans", "TC": "zh-Hant"}


def labels_for(language: Language) -> Labels:
    """The words of a document in ``language``: the set of a declared language's primary
    subtag (Chinese: its script's, by the regional face it asks for, so zh-TW and yue are
    Traditional); English for a detected language or one without a set."""
    if not language.declared:
        return ENGLISH
    face = language.declared_cjk_face()
    if face in _CHINESE:
        return LABELS[_CHINESE[face]]
    primary = _ALIASES.get(language.primary, language.primary)
    return LABELS.get(primary, ENGLISH)
