/* Fitting text to a width: template and parameter shortening, elision of
 * file names, cutting names, wrapping, and where the width comes from. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold/width.h"

static char *templ(const char *s)
{
	static char out[512];
	mt_fold_collapse_templates(out, s, strlen(s));
	return out;
}

static char *params(const char *s)
{
	static char out[512];
	mt_fold_drop_params(out, s, strlen(s));
	return out;
}

static char *fit(const char *name, const char *loc, size_t width)
{
	static char out[512];
	size_t n = mt_fold_fit_frame(out, sizeof(out), name, strlen(name), loc,
				     loc ? strlen(loc) : 0, width);
	cr_assert_eq(n, strlen(out));
	return out;
}

Test(width, templates_nested)
{
	cr_assert_str_eq(templ("std::vector<std::pair<int, int>>::push_back"),
			 "std::vector<>::push_back");
	cr_assert_str_eq(templ("a<b<c<d>>, e<f>>::g<h>::i"), "a<>::g<>::i");
	cr_assert_str_eq(templ("plain_c_function"), "plain_c_function");
}

Test(width, templates_keep_operators)
{
	cr_assert_str_eq(templ("Foo<int>::operator<<"), "Foo<>::operator<<");
	cr_assert_str_eq(templ("Foo<int>::operator<"), "Foo<>::operator<");
	cr_assert_str_eq(templ("Foo<int>::operator<=>"), "Foo<>::operator<=>");
	cr_assert_str_eq(templ("Foo<int>::operator->"), "Foo<>::operator->");
	cr_assert_str_eq(templ("Foo<int>::operator>>"), "Foo<>::operator>>");
	/* a lone '<' that never closes is left as it is */
	cr_assert_str_eq(templ("a<b"), "a<b");
}

Test(width, params_dropped)
{
	cr_assert_str_eq(params("f(int, char const*)"), "f");
	cr_assert_str_eq(params("(anonymous namespace)::g(int)"), "(anonymous namespace)::g");
	cr_assert_str_eq(params("S::operator()(int)"), "S::operator()");
	cr_assert_str_eq(params("main::{lambda(int)#1}::operator()"), "main::{lambda#1}::operator()");
}

Test(width, fit_leaves_what_fits)
{
	cr_assert_str_eq(fit("std::vector<int>::push_back", "v.cc:12", 80),
			 "std::vector<int>::push_back (v.cc:12)");
	cr_assert_str_eq(fit("main", NULL, 80), "main");
	cr_assert_str_eq(fit("main", "", 80), "main");
	/* no limit */
	cr_assert_str_eq(fit("std::map<int, std::string>::find(int)", "m.cc:1", 0),
			 "std::map<int, std::string>::find(int) (m.cc:1)");
}

Test(width, fit_steps_in_order)
{
	const char *n = "std::map<int, std::vector<std::string>>::find(int const&)";
	/* templates first: 45 columns are enough then */
	cr_assert_str_eq(fit(n, "stl_map.h:1201", 45),
			 "std::map<>::find(int const&) (stl_map.h:1201)");
	/* then parameters */
	cr_assert_str_eq(fit(n, "stl_map.h:1201", 36), "std::map<>::find (stl_map.h:1201)");
	/* then the middle of the file name, the line kept */
	cr_assert_str_eq(fit("f", "a_very_long_source_file_name_indeed.c:1234", 30),
			 "f (a_very_lo..._indeed.c:1234)");
	/* then the end of the name */
	char *s = fit("an_extraordinarily_long_function_name_for_testing", "x.c:9", 30);
	cr_assert_eq(strlen(s), 30, "'%s' is %zu columns", s, strlen(s));
	cr_assert(strstr(s, "... (x.c:9)"), "'%s'", s);
	cr_assert_eq(strncmp(s, "an_extraordinarily_...", 22), 0, "'%s'", s);
}

Test(width, fit_every_width)
{
	const char *n = "ns::Outer<ns::Inner<long>>::method_with_a_long_name(std::string const&, int)";
	for (size_t w = 20; w <= 120; w++) {
		char *s = fit(n, "some_directory_file.cc:4242", w);
		cr_assert_leq(mt_fold_text_width(s, strlen(s)), w, "width %zu: '%s'", w, s);
		cr_assert(strstr(s, ":4242") || !strchr(s, '('), "width %zu: the line is whole: '%s'",
			  w, s);
	}
}

Test(width, cut_and_elide)
{
	char out[64];
	mt_fold_cut_end(out, "abcdefghij", 10, 7);
	cr_assert_str_eq(out, "abcd...");
	mt_fold_cut_end(out, "abc", 3, 7);
	cr_assert_str_eq(out, "abc");
	mt_fold_elide_middle(out, "abcdefghijkl", 12, 9);
	cr_assert_str_eq(out, "abc...jkl");
	/* multibyte: columns, not bytes; never a split character */
	mt_fold_cut_end(out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 4);
	cr_assert_str_eq(out, "\xc3\xa9...");
	cr_assert_eq(mt_fold_text_width("\xc3\xa9t\xc3\xa9", 5), 3);
}

Test(width, wrap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	mt_fold_wrap(f, "one two three four five six seven", 14, 2);
	fclose(f);
	cr_assert_str_eq(buf, "one two three\n  four five\n  six seven\n");
	free(buf);
}

Test(width, resolve)
{
	cr_assert_eq(mt_fold_resolve_width(100, 0, "90", -1), 100);	/* --width first */
	cr_assert_eq(mt_fold_resolve_width(100, 1, "90", -1), 0);	/* --wide: no limit */
	cr_assert_eq(mt_fold_resolve_width(0, 0, "90", -1), 90);
	cr_assert_eq(mt_fold_resolve_width(0, 0, "junk", -1), 80);	/* not a terminal */
	cr_assert_eq(mt_fold_resolve_width(0, 0, "-5", -1), 80);
	cr_assert_eq(mt_fold_resolve_width(0, 0, NULL, -1), 80);
	cr_assert_eq(mt_fold_resolve_width(0, 0, "20", -1), MT_FOLD_MIN_WIDTH);
}
