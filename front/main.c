/* mt: the porcelain over mt's stages (docs/front.md).  Subcommands in
 * dispatch.c; each in its own file. */
#include "common/cli.h"
#include "front/dispatch.h"

int main(int argc, char **argv)
{
	mt_cli_init("mt", argv);
	return mt_front_dispatch(argc, argv);
}
