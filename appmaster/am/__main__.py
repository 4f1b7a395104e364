import sys

from appmaster import skeinimport

skeinimport.prepare()  # before skein is imported

from appmaster.am.master import main  # noqa: E402

sys.exit(main())
