"""The `__init__` of each shape of the package's records, compiled with the package (`records._init_template`).

Written by `python -c 'from agenthropic_site import records; records.write_init_templates()'`; do not edit.
tests/test_records.py checks it holds exactly the shapes of the package's records. The names
below stand for what each record's `__init__` is given when it is made from one of these.
"""

# ruff: noqa: E501 - a record of many fields has a long signature

from typing import Any

_set: Any = object.__setattr__
_FACTORY: Any = None
_factory0: Any = None
_factory1: Any = None
_factory2: Any = None
_factory3: Any = None
_factory4: Any = None
_factory5: Any = None
_factory6: Any = None
_factory7: Any = None
_factory8: Any = None
_factory9: Any = None
_factory10: Any = None
_factory11: Any = None
_factory12: Any = None
_factory13: Any = None
_factory14: Any = None
_factory15: Any = None
_factory16: Any = None
_factory17: Any = None
_factory18: Any = None
_factory19: Any = None
_factory20: Any = None
_factory21: Any = None
_factory22: Any = None
_factory23: Any = None
_factory24: Any = None
_factory25: Any = None
_factory26: Any = None
_factory27: Any = None
_factory28: Any = None
_factory29: Any = None
_factory30: Any = None
_factory31: Any = None
_factory32: Any = None
_factory33: Any = None
_factory34: Any = None
_factory35: Any = None
_factory36: Any = None
_factory37: Any = None


def _init0(self, _field0):
    self._field0 = _field0


def _init1(self, _field0):
    _set(self, '_field0', _field0)


def _init2(self, _field0, _field1):
    self._field0 = _field0
    self._field1 = _field1


def _init3(self, _field0, _field1):
    self._field0 = _factory0() if _field0 is _FACTORY else _field0
    self._field1 = _factory1() if _field1 is _FACTORY else _field1


def _init4(self, _field0, _field1):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)


def _init5(self, _field0, _field1, _field2):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2


def _init6(self, _field0, _field1, _field2):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)


def _init7(self, _field0, _field1, _field2, _field3):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3


def _init8(self, _field0, _field1, _field2, _field3):
    self._field0 = _factory0() if _field0 is _FACTORY else _field0
    self._field1 = _factory1() if _field1 is _FACTORY else _field1
    self._field2 = _field2
    self._field3 = _field3


def _init9(self, _field0, _field1, _field2, _field3):
    self._field0 = _factory0() if _field0 is _FACTORY else _field0
    self._field1 = _factory1() if _field1 is _FACTORY else _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3


def _init10(self, _field0, _field1, _field2, _field3):
    self._field0 = _factory0() if _field0 is _FACTORY else _field0
    self._field1 = _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _field3


def _init11(self, _field0, _field1, _field2, _field3):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)


def _init12(self, _field0, _field1, _field2, _field3):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    self.__post_init__()


def _init13(self, _field0, _field1, _field2, _field3):
    _set(self, '_field0', _factory0() if _field0 is _FACTORY else _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)


def _init14(self, _field0, _field1, _field2, _field3, _field4):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4


def _init15(self, _field0, _field1, _field2, _field3, _field4):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4


def _init16(self, _field0, _field1, _field2, _field3, _field4):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)


def _init17(self, _field0, _field1, _field2, _field3, _field4, _field5):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5


def _init18(self, _field0, _field1, _field2, _field3, _field4, _field5):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4
    self._field5 = _field5


def _init19(self, _field0, _field1, _field2, _field3, _field4, _field5):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)


def _init20(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6


def _init21(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6):
    self._field0 = _field0
    self._field1 = _factory1() if _field1 is _FACTORY else _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4
    self._field5 = _field5
    self._field6 = _field6


def _init22(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4
    self._field5 = _factory5() if _field5 is _FACTORY else _field5
    self._field6 = _factory6() if _field6 is _FACTORY else _field6


def _init23(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)
    _set(self, '_field6', _field6)


def _init24(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _factory6() if _field6 is _FACTORY else _field6
    self._field7 = _factory7() if _field7 is _FACTORY else _field7


def _init25(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _factory6() if _field6 is _FACTORY else _field6
    self._field7 = _factory7() if _field7 is _FACTORY else _field7


def _init26(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)
    _set(self, '_field6', _field6)
    _set(self, '_field7', _field7)


def _init27(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _factory7() if _field7 is _FACTORY else _field7
    self._field8 = _field8


def _init28(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)
    _set(self, '_field6', _field6)
    _set(self, '_field7', _field7)
    _set(self, '_field8', _field8)


def _init29(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9


def _init30(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4
    self._field5 = _factory5() if _field5 is _FACTORY else _field5
    self._field6 = _factory6() if _field6 is _FACTORY else _field6
    self._field7 = _factory7() if _field7 is _FACTORY else _field7
    self._field8 = _field8
    self._field9 = _factory9() if _field9 is _FACTORY else _field9


def _init31(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _factory8() if _field8 is _FACTORY else _field8
    self._field9 = _factory9() if _field9 is _FACTORY else _field9
    self._field10 = _factory10() if _field10 is _FACTORY else _field10


def _init32(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12


def _init33(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)
    _set(self, '_field6', _field6)
    _set(self, '_field7', _field7)
    _set(self, '_field8', _field8)
    _set(self, '_field9', _field9)
    _set(self, '_field10', _field10)
    _set(self, '_field11', _field11)
    _set(self, '_field12', _field12)
    _set(self, '_field13', _field13)


def _init34(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14


def _init35(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _factory2() if _field2 is _FACTORY else _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _factory4() if _field4 is _FACTORY else _field4
    self._field5 = _factory5() if _field5 is _FACTORY else _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _factory11() if _field11 is _FACTORY else _field11
    self._field12 = _factory12() if _field12 is _FACTORY else _field12
    self._field13 = _field13
    self._field14 = _factory14() if _field14 is _FACTORY else _field14
    self._field15 = _field15


def _init36(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15):
    _set(self, '_field0', _field0)
    _set(self, '_field1', _field1)
    _set(self, '_field2', _field2)
    _set(self, '_field3', _field3)
    _set(self, '_field4', _field4)
    _set(self, '_field5', _field5)
    _set(self, '_field6', _field6)
    _set(self, '_field7', _field7)
    _set(self, '_field8', _field8)
    _set(self, '_field9', _field9)
    _set(self, '_field10', _field10)
    _set(self, '_field11', _field11)
    _set(self, '_field12', _field12)
    _set(self, '_field13', _field13)
    _set(self, '_field14', _field14)
    _set(self, '_field15', _field15)


def _init37(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _factory3() if _field3 is _FACTORY else _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14
    self._field15 = _factory15() if _field15 is _FACTORY else _field15
    self._field16 = _field16
    self._field17 = _factory17() if _field17 is _FACTORY else _field17
    self._field18 = _field18


def _init38(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14
    self._field15 = _field15
    self._field16 = _factory16() if _field16 is _FACTORY else _field16
    self._field17 = _factory17() if _field17 is _FACTORY else _field17
    self._field18 = _factory18() if _field18 is _FACTORY else _field18
    self._field19 = _field19
    self._field20 = _field20
    self._field21 = _factory21() if _field21 is _FACTORY else _field21


def _init39(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14
    self._field15 = _field15
    self._field16 = _field16
    self._field17 = _field17
    self._field18 = _factory18() if _field18 is _FACTORY else _field18
    self._field19 = _field19
    self._field20 = _field20
    self._field21 = _factory21() if _field21 is _FACTORY else _field21


def _init40(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21, _field22, _field23, _field24, _field25, _field26, _field27):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _factory5() if _field5 is _FACTORY else _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _factory8() if _field8 is _FACTORY else _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _factory12() if _field12 is _FACTORY else _field12
    self._field13 = _factory13() if _field13 is _FACTORY else _field13
    self._field14 = _factory14() if _field14 is _FACTORY else _field14
    self._field15 = _factory15() if _field15 is _FACTORY else _field15
    self._field16 = _factory16() if _field16 is _FACTORY else _field16
    self._field17 = _factory17() if _field17 is _FACTORY else _field17
    self._field18 = _factory18() if _field18 is _FACTORY else _field18
    self._field19 = _factory19() if _field19 is _FACTORY else _field19
    self._field20 = _factory20() if _field20 is _FACTORY else _field20
    self._field21 = _factory21() if _field21 is _FACTORY else _field21
    self._field22 = _factory22() if _field22 is _FACTORY else _field22
    self._field23 = _factory23() if _field23 is _FACTORY else _field23
    self._field24 = _factory24() if _field24 is _FACTORY else _field24
    self._field25 = _factory25() if _field25 is _FACTORY else _field25
    self._field26 = _factory26() if _field26 is _FACTORY else _field26
    self._field27 = _factory27() if _field27 is _FACTORY else _field27


def _init41(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21, _field22, _field23, _field24, _field25, _field26, _field27, _field28):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14
    self._field15 = _field15
    self._field16 = _field16
    self._field17 = _field17
    self._field18 = _field18
    self._field19 = _field19
    self._field20 = _field20
    self._field21 = _field21
    self._field22 = _factory22() if _field22 is _FACTORY else _field22
    self._field23 = _field23
    self._field24 = _factory24() if _field24 is _FACTORY else _field24
    self._field25 = _field25
    self._field26 = _factory26() if _field26 is _FACTORY else _field26
    self._field27 = _factory27() if _field27 is _FACTORY else _field27
    self._field28 = _field28


def _init42(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21, _field22, _field23, _field24, _field25, _field26, _field27, _field28, _field29, _field30, _field31, _field32, _field33):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _factory6() if _field6 is _FACTORY else _field6
    self._field7 = _factory7() if _field7 is _FACTORY else _field7
    self._field8 = _field8
    self._field9 = _factory9() if _field9 is _FACTORY else _field9
    self._field10 = _factory10() if _field10 is _FACTORY else _field10
    self._field11 = _factory11() if _field11 is _FACTORY else _field11
    self._field12 = _factory12() if _field12 is _FACTORY else _field12
    self._field13 = _factory13() if _field13 is _FACTORY else _field13
    self._field14 = _factory14() if _field14 is _FACTORY else _field14
    self._field15 = _field15
    self._field16 = _field16
    self._field17 = _field17
    self._field18 = _field18
    self._field19 = _factory19() if _field19 is _FACTORY else _field19
    self._field20 = _field20
    self._field21 = _field21
    self._field22 = _field22
    self._field23 = _field23
    self._field24 = _factory24() if _field24 is _FACTORY else _field24
    self._field25 = _factory25() if _field25 is _FACTORY else _field25
    self._field26 = _factory26() if _field26 is _FACTORY else _field26
    self._field27 = _factory27() if _field27 is _FACTORY else _field27
    self._field28 = _factory28() if _field28 is _FACTORY else _field28
    self._field29 = _field29
    self._field30 = _field30
    self._field31 = _field31
    self._field32 = _factory32() if _field32 is _FACTORY else _field32
    self._field33 = _factory33() if _field33 is _FACTORY else _field33


def _init43(self, _field0, _field1, _field2, _field3, _field4, _field5, _field6, _field7, _field8, _field9, _field10, _field11, _field12, _field13, _field14, _field15, _field16, _field17, _field18, _field19, _field20, _field21, _field22, _field23, _field24, _field25, _field26, _field27, _field28, _field29, _field30, _field31, _field32, _field33, _field34, _field35, _field36, _field37):
    self._field0 = _field0
    self._field1 = _field1
    self._field2 = _field2
    self._field3 = _field3
    self._field4 = _field4
    self._field5 = _field5
    self._field6 = _field6
    self._field7 = _field7
    self._field8 = _field8
    self._field9 = _field9
    self._field10 = _field10
    self._field11 = _field11
    self._field12 = _field12
    self._field13 = _field13
    self._field14 = _field14
    self._field15 = _field15
    self._field16 = _field16
    self._field17 = _factory17() if _field17 is _FACTORY else _field17
    self._field18 = _factory18() if _field18 is _FACTORY else _field18
    self._field19 = _field19
    self._field20 = _field20
    self._field21 = _factory21() if _field21 is _FACTORY else _field21
    self._field22 = _factory22() if _field22 is _FACTORY else _field22
    self._field23 = _factory23() if _field23 is _FACTORY else _field23
    self._field24 = _factory24() if _field24 is _FACTORY else _field24
    self._field25 = _factory25() if _field25 is _FACTORY else _field25
    self._field26 = _factory26() if _field26 is _FACTORY else _field26
    self._field27 = _factory27() if _field27 is _FACTORY else _field27
    self._field28 = _factory28() if _field28 is _FACTORY else _field28
    self._field29 = _factory29() if _field29 is _FACTORY else _field29
    self._field30 = _field30
    self._field31 = _factory31() if _field31 is _FACTORY else _field31
    self._field32 = _factory32() if _field32 is _FACTORY else _field32
    self._field33 = _factory33() if _field33 is _FACTORY else _field33
    self._field34 = _factory34() if _field34 is _FACTORY else _field34
    self._field35 = _factory35() if _field35 is _FACTORY else _field35
    self._field36 = _field36
    self._field37 = _factory37() if _field37 is _FACTORY else _field37


INITS: dict[tuple[int, bool, tuple[int, ...], bool], Any] = {
    (1, False, (), False): _init0,
    (1, True, (), False): _init1,
    (2, False, (), False): _init2,
    (2, False, (0, 1), False): _init3,
    (2, True, (), False): _init4,
    (3, False, (), False): _init5,
    (3, True, (), False): _init6,
    (4, False, (), False): _init7,
    (4, False, (0, 1), False): _init8,
    (4, False, (0, 1, 2, 3), False): _init9,
    (4, False, (0, 2), False): _init10,
    (4, True, (), False): _init11,
    (4, True, (), True): _init12,
    (4, True, (0,), False): _init13,
    (5, False, (), False): _init14,
    (5, False, (3, 4), False): _init15,
    (5, True, (), False): _init16,
    (6, False, (), False): _init17,
    (6, False, (2, 3, 4), False): _init18,
    (6, True, (), False): _init19,
    (7, False, (), False): _init20,
    (7, False, (1, 2, 3, 4), False): _init21,
    (7, False, (2, 3, 4, 5, 6), False): _init22,
    (7, True, (), False): _init23,
    (8, False, (2, 6, 7), False): _init24,
    (8, False, (6, 7), False): _init25,
    (8, True, (), False): _init26,
    (9, False, (7,), False): _init27,
    (9, True, (), False): _init28,
    (10, False, (), False): _init29,
    (10, False, (4, 5, 6, 7, 9), False): _init30,
    (11, False, (8, 9, 10), False): _init31,
    (13, False, (), False): _init32,
    (14, True, (), False): _init33,
    (15, False, (), False): _init34,
    (16, False, (2, 3, 4, 5, 11, 12, 14), False): _init35,
    (16, True, (), False): _init36,
    (19, False, (3, 15, 17), False): _init37,
    (22, False, (16, 17, 18, 21), False): _init38,
    (22, False, (18, 21), False): _init39,
    (28, False, (5, 8, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27), False): _init40,
    (29, False, (22, 24, 26, 27), False): _init41,
    (34, False, (6, 7, 9, 10, 11, 12, 13, 14, 19, 24, 25, 26, 27, 28, 32, 33), False): _init42,
    (38, False, (17, 18, 21, 22, 23, 24, 25, 26, 27, 28, 29, 31, 32, 33, 34, 35, 37), False): _init43,
}
